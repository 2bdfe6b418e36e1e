import { setLogLevel } from "../src/common/log.ts";

// Every HTTP request writes an info line (src/common/request-log.ts): thousands of them would bury what a
// failing test says. Tests that read those lines set the level they need and put it back.
setLogLevel("warn");
