//! `#[tool(icon = "…")]`: a `data:` URI or an `https:` URL, kept in
//! `INFO.icon` and the definition, and listed over MCP as `icons`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolprism::{ContentBlock, Registry, Tool, tool};

#[derive(Clone, Deserialize, JsonSchema)]
pub struct Args {
    pub city: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Forecast {
    pub sky: String,
}

pub struct WeatherTool;

/// The sky over a city.
#[tool(title = "Weather", icon = "data:image/svg+xml;base64,PHN2Zy8+", read_only)]
impl WeatherTool {
    fn execute(args: Args) -> Forecast {
        Forecast {
            sky: format!("clear over {}", args.city),
        }
    }

    fn render(_args: &Args, value: &Forecast) -> Vec<ContentBlock> {
        vec![ContentBlock::text(&value.sky)]
    }
}

pub struct MapTool;

/// A map of a city.
#[tool(icon = "https://example.com/map.svg")]
impl MapTool {
    fn execute(args: Args) -> Forecast {
        Forecast { sky: args.city }
    }

    fn render(_args: &Args, value: &Forecast) -> Vec<ContentBlock> {
        vec![ContentBlock::text(&value.sky)]
    }
}

fn main() {
    assert_eq!(
        WeatherTool::INFO.icon,
        Some("data:image/svg+xml;base64,PHN2Zy8+")
    );
    assert_eq!(MapTool::INFO.icon, Some("https://example.com/map.svg"));
    let registry = Registry::builder().tool(WeatherTool).tool(MapTool).build().unwrap();
    let weather = registry.definition("weather").unwrap();
    assert_eq!(weather.icon.as_deref(), WeatherTool::INFO.icon);
    let listed = toolprism::dialect::mcp::tool(weather, "2025-11-25");
    assert_eq!(
        listed["icons"],
        serde_json::json!([{"src": "data:image/svg+xml;base64,PHN2Zy8+", "mimeType": "image/svg+xml"}])
    );
}
