// The WebGL drawing library of the viewer (sigma.js and its programs), as the global
// AtlasGraphLib, so that the viewer's own script (src/viewer_page/viewer.js) stays readable and
// unbundled. Loaded only where the browser has WebGL: its modules create WebGL resources as
// they load. The graph model is graph-model.js (model.js).
import Sigma from "sigma";
import { createNodeImageProgram } from "@sigma/node-image";
import { EdgeArrowProgram } from "sigma/rendering";

window.AtlasGraphLib = { Sigma, createNodeImageProgram, EdgeArrowProgram };
