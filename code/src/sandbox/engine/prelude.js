// Runs once per run, before the program, in a pristine context. It defines
// the globals `tools` and `ToolCallError` and returns the helpers the engine
// keeps. Everything it needs is read here, once, so nothing the program does
// to globals or prototypes later reaches it: property descriptors and the
// proxy handler have no prototype (an `Object.prototype.get` cannot become a
// trap), and the globals are neither writable nor configurable.
(function (nativeCall) {
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

  // The engine settles the error made when the call was submitted (so its
  // stack shows the program's call site) once the host has answered.
  const fill = (error, code, message) => {
    defineProperty(error, "code", data(code, true));
    defineProperty(error, "message", data(message, false));
    return error;
  };

  const callers = create(null);
  const callerFor = (name) => {
    let caller = callers[name];
    if (caller === undefined) {
      caller = function (args) {
        return nativeCall(name, args, arguments.length, new ToolCallError(name, "PENDING", ""));
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
