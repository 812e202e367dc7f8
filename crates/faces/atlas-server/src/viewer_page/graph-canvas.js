// The viewer's drawing where the browser has no WebGL (a machine without a GPU, a remote
// desktop, Chromium's --disable-3d-apis): the graph on a 2D canvas, behind the part of sigma.js's
// interface the viewer uses (its camera, reducers, label and hover drawers, node events,
// display data), so the viewer has one code path for both. Slower than WebGL: nodes and edges
// are drawn in one path a colour, labels only where they have room, and edges are left out
// while the camera moves on a large graph, as the WebGL drawing does.
"use strict";

(() => {
  const DEFAULTS = {
    labelSize: 14,
    labelWeight: "normal",
    labelFont: "sans-serif",
    labelRenderedSizeThreshold: 6,
    hideEdgesOnMove: false,
    hideLabelsOnMove: false,
    zIndex: false,
    nodeReducer: null,
    edgeReducer: null,
    defaultDrawNodeLabel: null,
    defaultDrawNodeHover: null,
  };
  // How far the graph stays from the canvas's edges, as a share of its smaller side.
  const PADDING = 0.05;

  class Camera {
    constructor(onChange) {
      this.x = 0.5;
      this.y = 0.5;
      this.angle = 0;
      this.ratio = 1;
      this.onChange = onChange;
      this.animation = null;
    }
    getState() {
      return { x: this.x, y: this.y, angle: this.angle, ratio: this.ratio };
    }
    setState(state) {
      for (const key of ["x", "y", "angle", "ratio"]) {
        if (Number.isFinite(state[key])) this[key] = state[key];
      }
      this.ratio = Math.min(Math.max(this.ratio, 0.002), 20);
      this.onChange();
    }
    animate(target, options = {}) {
      const from = this.getState();
      const duration = options.duration ?? 300;
      const started = performance.now();
      if (this.animation) cancelAnimationFrame(this.animation);
      const step = (now) => {
        const t = Math.min(1, (now - started) / duration);
        const ease = t < 0.5 ? 2 * t * t : 1 - (-2 * t + 2) ** 2 / 2;
        const state = {};
        for (const key of ["x", "y", "angle", "ratio"]) {
          if (Number.isFinite(target[key])) state[key] = from[key] + (target[key] - from[key]) * ease;
        }
        this.setState(state);
        this.animation = t < 1 ? requestAnimationFrame(step) : null;
      };
      this.animation = requestAnimationFrame(step);
    }
  }

  class CanvasRenderer {
    constructor(graph, container, settings = {}) {
      this.graph = graph;
      this.container = container;
      this.settings = { ...DEFAULTS, ...settings };
      this.listeners = new Map();
      this.camera = new Camera(() => this.scheduleRender(true));
      this.canvas = document.createElement("canvas");
      this.canvas.className = "graph-canvas";
      this.canvas.style.cssText = "position:absolute;inset:0;width:100%;height:100%;touch-action:none";
      container.append(this.canvas);
      this.context = this.canvas.getContext("2d");
      this.nodeData = new Map();
      this.edgeData = new Map();
      this.nodeOrder = [];
      this.edgeOrder = [];
      this.labels = new Set();
      this.images = new Map();
      this.hovered = null;
      this.moving = false;
      this.frame = null;
      this.refresh = this.refresh.bind(this);
      this.graphEvents = ["nodeAdded", "edgeAdded", "nodeDropped", "edgeDropped", "cleared",
        "nodeAttributesUpdated", "edgeAttributesUpdated", "eachNodeAttributesUpdated", "eachEdgeAttributesUpdated"];
      for (const name of this.graphEvents) graph.on(name, this.refresh);
      this.resizeObserver = new ResizeObserver(() => this.scheduleRender(false));
      this.resizeObserver.observe(container);
      this.bindMouse();
      this.refresh();
    }

    // ---- sigma's interface, as far as the viewer uses it ----
    getGraph() {
      return this.graph;
    }
    getCamera() {
      return this.camera;
    }
    getSettings() {
      return this.settings;
    }
    on(event, handler) {
      if (!this.listeners.has(event)) this.listeners.set(event, []);
      this.listeners.get(event).push(handler);
      return this;
    }
    kill() {
      for (const name of this.graphEvents) this.graph.off(name, this.refresh);
      this.resizeObserver.disconnect();
      if (this.frame) cancelAnimationFrame(this.frame);
      this.canvas.remove();
      this.listeners.clear();
    }
    getNodeDisplayData(node) {
      return this.nodeData.get(node);
    }
    getEdgeDisplayData(edge) {
      return this.edgeData.get(edge);
    }
    getNodeDisplayedLabels() {
      return new Set(this.labels);
    }
    scaleSize(size) {
      return size / Math.sqrt(this.camera.ratio);
    }
    // Viewport pixels to a unit of the framed graph, at the camera's zoom.
    pixelsPerUnit(width, height) {
      return (Math.min(width, height) * (1 - 2 * PADDING)) / this.camera.ratio;
    }
    graphToViewport(point) {
      return this.framedGraphToViewport(this.frameOf(point));
    }
    framedGraphToViewport(point) {
      const { width, height } = this.size();
      const scale = this.pixelsPerUnit(width, height);
      return { x: width / 2 + (point.x - this.camera.x) * scale, y: height / 2 - (point.y - this.camera.y) * scale };
    }
    viewportToFramedGraph(point) {
      const { width, height } = this.size();
      const scale = this.pixelsPerUnit(width, height);
      return { x: this.camera.x + (point.x - width / 2) / scale, y: this.camera.y - (point.y - height / 2) / scale };
    }
    // The graph's data again (reducers, extent), then drawn.
    refresh() {
      this.process();
      this.render();
      return this;
    }
    render() {
      if (this.frame) cancelAnimationFrame(this.frame);
      this.frame = null;
      this.draw();
      return this;
    }

    // ---- inside ----
    emit(event, payload) {
      for (const handler of this.listeners.get(event) || []) handler(payload);
    }
    size() {
      return { width: this.container.clientWidth || 1, height: this.container.clientHeight || 1 };
    }
    scheduleRender(moving) {
      if (moving) {
        this.moving = true;
        clearTimeout(this.settle);
        this.settle = setTimeout(() => {
          this.moving = false;
          this.scheduleRender(false);
        }, 150);
      }
      if (!this.frame) this.frame = requestAnimationFrame(() => this.render());
    }
    // The graph's coordinates to the unit square the camera looks at, the aspect kept.
    frameOf(point) {
      const e = this.extent;
      return { x: 0.5 + (point.x - e.cx) / e.span, y: 0.5 + (point.y - e.cy) / e.span };
    }
    process() {
      let [minX, minY, maxX, maxY] = [Infinity, Infinity, -Infinity, -Infinity];
      this.graph.forEachNode((_, a) => {
        minX = Math.min(minX, a.x);
        maxX = Math.max(maxX, a.x);
        minY = Math.min(minY, a.y);
        maxY = Math.max(maxY, a.y);
      });
      const span = Math.max(maxX - minX, maxY - minY) || 1;
      this.extent = Number.isFinite(span) && Number.isFinite(minX)
        ? { cx: (minX + maxX) / 2, cy: (minY + maxY) / 2, span }
        : { cx: 0, cy: 0, span: 1 };
      const { nodeReducer, edgeReducer } = this.settings;
      this.nodeData = new Map();
      this.graph.forEachNode((node, attributes) => {
        const data = { size: 4, color: "#999", zIndex: 0, ...(nodeReducer ? nodeReducer(node, attributes) : attributes) };
        Object.assign(data, this.frameOf(data));
        this.nodeData.set(node, data);
        if (data.type === "image" && data.image && !this.images.has(data.image)) this.loadImage(data.image);
      });
      this.edgeData = new Map();
      this.graph.forEachEdge((edge, attributes, source, target) => {
        const data = { size: 1, color: "#ccc", zIndex: 0, ...(edgeReducer ? edgeReducer(edge, attributes) : attributes) };
        data.source = source;
        data.target = target;
        this.edgeData.set(edge, data);
      });
      // Drawing order, once a refresh rather than once a frame.
      const byZ = (a, b) => (this.settings.zIndex ? a[1].zIndex - b[1].zIndex : 0);
      this.nodeOrder = [...this.nodeData].filter(([, d]) => !d.hidden).sort(byZ);
      this.edgeOrder = [...this.edgeData.values()].filter((e) => !e.hidden);
      if (this.settings.zIndex) this.edgeOrder.sort((a, b) => a.zIndex - b.zIndex);
    }
    loadImage(url) {
      const image = new Image();
      this.images.set(url, null);
      image.onload = () => {
        this.images.set(url, image);
        this.scheduleRender(false);
      };
      image.src = url;
    }
    draw() {
      const { width, height } = this.size();
      const ratio = window.devicePixelRatio || 1;
      if (this.canvas.width !== Math.round(width * ratio) || this.canvas.height !== Math.round(height * ratio)) {
        this.canvas.width = Math.round(width * ratio);
        this.canvas.height = Math.round(height * ratio);
      }
      const ctx = this.context;
      ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
      ctx.clearRect(0, 0, width, height);
      const large = this.settings.hideEdgesOnMove && this.moving;
      // Each node where it is drawn: viewport pixels and its drawn size, beside its data.
      const scale = this.pixelsPerUnit(width, height);
      const grow = this.scaleSize(1);
      const { x: cx, y: cy } = this.camera;
      const at = new Map();
      for (const [node, data] of this.nodeOrder) {
        at.set(node, { x: width / 2 + (data.x - cx) * scale, y: height / 2 - (data.y - cy) * scale, size: data.size * grow, data });
      }
      const drawn = (p) => ({ ...p.data, x: p.x, y: p.y, size: p.size });
      const onScreen = (p) => p.x > -50 && p.y > -50 && p.x < width + 50 && p.y < height + 50;
      if (!large) this.drawEdges(ctx, at, onScreen);
      this.drawNodes(ctx, at, onScreen);
      this.labels = new Set();
      if (!(this.settings.hideLabelsOnMove && this.moving)) this.drawLabels(ctx, at, drawn, onScreen, width, height);
      // The hovered node and the highlighted ones (the viewer's selected page) on a card.
      const hover = this.settings.defaultDrawNodeHover;
      if (hover) {
        for (const [node, p] of at) {
          if (node === this.hovered || p.data.highlighted) hover(ctx, drawn(p), this.settings);
        }
      }
    }
    // Edges in one path a colour and width, each with its arrowhead where it is long enough.
    drawEdges(ctx, at, onScreen) {
      const batches = new Map();
      for (const edge of this.edgeOrder) {
        const from = at.get(edge.source);
        const to = at.get(edge.target);
        if (!from || !to || (!onScreen(from) && !onScreen(to))) continue;
        const key = edge.color + "|" + edge.size.toFixed(1);
        if (!batches.has(key)) batches.set(key, { color: edge.color, size: edge.size, lines: [] });
        batches.get(key).lines.push([from, to]);
      }
      for (const { color, size, lines } of batches.values()) {
        ctx.strokeStyle = color;
        ctx.fillStyle = color;
        ctx.lineWidth = size;
        ctx.beginPath();
        const heads = [];
        for (const [from, to] of lines) {
          const dx = to.x - from.x;
          const dy = to.y - from.y;
          const length = Math.hypot(dx, dy);
          if (length < 1) continue;
          const [ux, uy] = [dx / length, dy / length];
          const end = { x: to.x - ux * to.size, y: to.y - uy * to.size };
          ctx.moveTo(from.x, from.y);
          ctx.lineTo(end.x, end.y);
          if (length > to.size + 12) heads.push([end, ux, uy]);
        }
        ctx.stroke();
        ctx.beginPath();
        const head = 4 + size * 1.5;
        for (const [end, ux, uy] of heads) {
          ctx.moveTo(end.x, end.y);
          ctx.lineTo(end.x - ux * head - uy * head * 0.5, end.y - uy * head + ux * head * 0.5);
          ctx.lineTo(end.x - ux * head + uy * head * 0.5, end.y - uy * head - ux * head * 0.5);
          ctx.closePath();
        }
        ctx.fill();
      }
    }
    // Discs in one path a colour, in z order; a page with a screenshot shows it in its disc.
    drawNodes(ctx, at, onScreen) {
      let batch = null;
      const flush = () => {
        if (!batch) return;
        ctx.fillStyle = batch.color;
        ctx.fill();
        batch = null;
      };
      for (const node of at.values()) {
        if (!onScreen(node)) continue;
        const { color, type, image: url } = node.data;
        const image = type === "image" && this.images.get(url);
        if (image) {
          flush();
          ctx.save();
          ctx.beginPath();
          ctx.arc(node.x, node.y, node.size, 0, 2 * Math.PI);
          ctx.clip();
          ctx.drawImage(image, node.x - node.size, node.y - node.size, node.size * 2, node.size * 2);
          ctx.restore();
          continue;
        }
        if (!batch || batch.color !== color) {
          flush();
          batch = { color };
          ctx.beginPath();
        }
        // A node of a pixel or two is a square: the same to the eye, far cheaper than a disc.
        if (node.size < 1.5) {
          ctx.rect(node.x - node.size, node.y - node.size, node.size * 2, node.size * 2);
        } else {
          ctx.moveTo(node.x + node.size, node.y);
          ctx.arc(node.x, node.y, node.size, 0, 2 * Math.PI);
        }
      }
      flush();
    }
    // Labels where they have room: forced ones first, then the larger nodes, none over another
    // label or another node's disc.
    drawLabels(ctx, at, drawn, onScreen, width, height) {
      const { labelRenderedSizeThreshold, labelSize, labelWeight, labelFont } = this.settings;
      const draw = this.settings.defaultDrawNodeLabel;
      if (!draw) return;
      ctx.font = `${labelWeight} ${labelSize}px ${labelFont}`;
      const candidates = [...at.entries()]
        .filter(([, p]) => p.data.label && onScreen(p) && (p.data.forceLabel || p.size >= labelRenderedSizeThreshold))
        .map(([node, p]) => [node, drawn(p)])
        .sort(([, a], [, b]) => (b.forceLabel ? 1 : 0) - (a.forceLabel ? 1 : 0) || b.size - a.size);
      const boxes = [];
      const overlaps = (box) =>
        boxes.some((b) => box.x < b.x + b.width && b.x < box.x + box.width && box.y < b.y + b.height && b.y < box.y + box.height);
      for (const [node, data] of candidates) {
        const box = {
          x: data.x + data.size * 1.5 + 4,
          y: data.y + labelSize / 3 - labelSize,
          width: ctx.measureText(data.label).width,
          height: labelSize,
        };
        if (box.x > width || box.y > height || overlaps(box)) continue;
        boxes.push(box);
        this.labels.add(node);
        draw(ctx, data, this.settings);
      }
    }
    nodeAt(x, y) {
      let found = null;
      let best = Infinity;
      for (const [node, data] of this.nodeData) {
        if (data.hidden) continue;
        const p = this.framedGraphToViewport(data);
        const distance = Math.hypot(p.x - x, p.y - y);
        if (distance <= this.scaleSize(data.size) + 2 && distance < best) {
          best = distance;
          found = node;
        }
      }
      return found;
    }
    bindMouse() {
      const canvas = this.canvas;
      let drag = null;
      const local = (e) => {
        const r = canvas.getBoundingClientRect();
        return { x: e.clientX - r.left, y: e.clientY - r.top };
      };
      canvas.addEventListener("pointerdown", (e) => {
        drag = { start: local(e), camera: this.camera.getState(), moved: false };
        canvas.setPointerCapture(e.pointerId);
      });
      canvas.addEventListener("pointermove", (e) => {
        const p = local(e);
        if (drag) {
          const [dx, dy] = [p.x - drag.start.x, p.y - drag.start.y];
          if (Math.hypot(dx, dy) > 3) drag.moved = true;
          if (drag.moved) {
            const from = this.viewportToFramedGraph(drag.start);
            const to = this.viewportToFramedGraph(p);
            this.camera.setState({ x: drag.camera.x - (to.x - from.x), y: drag.camera.y - (to.y - from.y) });
            drag.start = p;
            drag.camera = this.camera.getState();
          }
          return;
        }
        const node = this.nodeAt(p.x, p.y);
        if (node !== this.hovered) {
          if (this.hovered) this.emit("leaveNode", { node: this.hovered });
          this.hovered = node;
          if (node) this.emit("enterNode", { node });
          this.scheduleRender(false);
        }
      });
      canvas.addEventListener("pointerup", (e) => {
        const p = local(e);
        const clicked = drag && !drag.moved ? this.nodeAt(p.x, p.y) : null;
        drag = null;
        if (clicked) this.emit("clickNode", { node: clicked });
      });
      canvas.addEventListener("wheel", (e) => {
        e.preventDefault();
        const p = local(e);
        const before = this.viewportToFramedGraph(p);
        const ratio = this.camera.ratio * (e.deltaY > 0 ? 1.2 : 1 / 1.2);
        this.camera.ratio = Math.min(Math.max(ratio, 0.002), 20);
        const after = this.viewportToFramedGraph(p);
        this.camera.setState({ x: this.camera.x + before.x - after.x, y: this.camera.y + before.y - after.y });
      }, { passive: false });
    }
  }

  window.AtlasCanvasGraph = { CanvasRenderer };
})();
