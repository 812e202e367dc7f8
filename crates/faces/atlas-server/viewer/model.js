// The graph model of the viewer (graphology), as the global AtlasGraphModel: apart from the
// drawing library, because it needs no WebGL and the viewer draws without WebGL too.
import Graph from "graphology";

window.AtlasGraphModel = { Graph };
