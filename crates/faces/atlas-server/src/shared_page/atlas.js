// What Atlas's pages (the viewer, the chat) share: requests with the bearer token asked for once
// per tab on a 401, an element builder that never writes markup, and a reader of server-sent
// events. Served from the binary at /shared/atlas.js, before each page's own script.
"use strict";

const Atlas = (() => {
  let token = sessionStorage.getItem("atlas-token") || "";

  // fetch(path, options) with the token; on 401 the token is asked for (`prompt`) and the
  // request sent once more.
  async function request(path, options = {}, prompt = "This Atlas needs a token / 这个 Atlas 需要令牌") {
    const send = () => {
      const headers = { ...(options.headers || {}) };
      if (token) headers.Authorization = "Bearer " + token;
      return fetch(path, { ...options, headers });
    };
    let response = await send();
    if (response.status === 401) {
      token = window.prompt(prompt) || "";
      sessionStorage.setItem("atlas-token", token);
      response = await send();
    }
    return response;
  }

  // An element with attributes (`onclick` a listener; null, undefined and false left out) and
  // children (nodes, or text: never parsed as markup).
  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (k === "onclick") node.addEventListener("click", v);
      else if (v !== undefined && v !== null && v !== false) node.setAttribute(k, v === true ? "" : v);
    }
    for (const child of children.flat()) {
      if (child !== null && child !== undefined) node.append(child instanceof Node ? child : String(child));
    }
    return node;
  }

  // Reads a response of server-sent events to its end, calling `onEvent` with each event's JSON
  // data (a block that is not JSON, a comment or a keep-alive, is skipped) and `onChunk` after
  // each piece read.
  async function readEvents(response, onEvent, onChunk = () => {}) {
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = block.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).join("\n");
        if (!data) continue;
        let event;
        try { event = JSON.parse(data); } catch (_) { continue; }
        onEvent(event);
      }
      onChunk();
    }
  }

  return { request, el, readEvents, hasToken: () => token !== "" };
})();
