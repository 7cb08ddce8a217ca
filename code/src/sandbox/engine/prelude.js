// Runs once per run, before the program, in a pristine context. It defines
// the globals `tools` and `ToolCallError` and returns the helpers the engine
// keeps. Everything it needs is read here, once, so nothing the program does
// to globals or prototypes later reaches it: property descriptors and the
// proxy handler have no prototype (an `Object.prototype.get` cannot become a
// trap), and the globals are neither writable nor configurable.
(function (nativeCall, nativeName) {
  "use strict";
  const defineProperty = Object.defineProperty;
  const freeze = Object.freeze;
  const create = Object.create;
  const stackGetter = Object.getOwnPropertyDescriptor(Error.prototype, "stack").get;
  const ProxyCtor = Proxy;
  const TypeErrorCtor = TypeError;

  const data = (value, enumerable) => ({
    __proto__: null, value, writable: true, enumerable, configurable: true,
  });
  const constant = (value) => ({
    __proto__: null, value, writable: false, enumerable: false, configurable: false,
  });

  // A failed nested call: `toolName`, `code` and `message` say which and why.
  class ToolCallError extends Error {
    constructor(toolName, code, message) {
      super(message);
      defineProperty(this, "toolName", data(toolName, true));
      defineProperty(this, "code", data(code, true));
    }
  }
  defineProperty(ToolCallError.prototype, "name", data("ToolCallError", false));
  freeze(ToolCallError.prototype);
  freeze(ToolCallError);

  // A call that fails rejects with an `Error` the engine made in the
  // program's frame (when the call was submitted, so its stack shows the
  // program's call site) and gave `ToolCallError.prototype`; this fills it
  // in. A call that succeeds makes no error object at all.
  const fill = (error, toolName, code, message) => {
    defineProperty(error, "toolName", data(toolName, true));
    defineProperty(error, "code", data(code, true));
    defineProperty(error, "message", data(message, false));
    return error;
  };

  // One caller per tool name. On its first call it registers the name with
  // the engine, which reads it once and answers with an id (or -2 when it
  // keeps no more names: the name is then read on every call).
  const callers = create(null);
  const callerFor = (name) => {
    let caller = callers[name];
    if (caller === undefined) {
      let id = -1;
      caller = function (args) {
        if (id === -1) id = nativeName(name);
        return nativeCall(id, name, args, arguments.length);
      };
      callers[name] = caller;
    }
    return caller;
  };
  const readOnly = () => {
    throw new TypeErrorCtor("tools is read-only: call tools.<name>(args), or tools[\"name\"](args)");
  };
  const handler = freeze({
    __proto__: null,
    // Every string key is a tool, so a misspelled name rejects (the host
    // answers UNKNOWN_TOOL) instead of throwing a TypeError. `then` is not:
    // `tools` must not look like a promise to `await` and `return`.
    get: (target, key) => (typeof key === "string" && key !== "then" ? callerFor(key) : undefined),
    has: (target, key) => typeof key === "string" && key !== "then",
    set: readOnly,
    defineProperty: readOnly,
    deleteProperty: readOnly,
    setPrototypeOf: readOnly,
    preventExtensions: readOnly,
    getOwnPropertyDescriptor: () => undefined,
    ownKeys: () => [],
    getPrototypeOf: () => null,
    isExtensible: () => true,
  });
  const tools = new ProxyCtor(create(null), handler);
  defineProperty(globalThis, "tools", constant(tools));
  defineProperty(globalThis, "ToolCallError", constant(ToolCallError));
  return { __proto__: null, fill, stack: stackGetter, toolErrorProto: ToolCallError.prototype };
})
