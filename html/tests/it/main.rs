//! The HTML pages: rendered, and drawn in a real browser. One test binary.
//!
//! Each file beside this one was a test binary of its own; one binary links once.

#[path = "../support/echo.rs"]
mod echo;

mod html_browser;
mod html_render;
