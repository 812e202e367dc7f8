// The one entry of the bundle: what the viewer's own script (src/viewer_page/viewer.js) uses,
// as the global AtlasGraphLib, so that script stays readable and unbundled.
import Graph from "graphology";
import Sigma from "sigma";
import { createNodeImageProgram } from "@sigma/node-image";
import { EdgeArrowProgram } from "sigma/rendering";

window.AtlasGraphLib = { Graph, Sigma, createNodeImageProgram, EdgeArrowProgram };
