/** Every operator's job-creating POST (`/v1/map`, `/v1/filter`, …), one a registered module, served by the shared route factory. */
import type { OperatorModule } from "../operators/define";
import { OPERATOR_MODULES } from "../operators/registry";
import { newRouter } from "../lib/router";
import { pipelinesFromXml } from "./pipelines-xml";
import { operatorRoute } from "./operator-route";

export function operatorRoutes() {
  const router = newRouter().use("/pipelines", pipelinesFromXml); // the XML task format, read before the JSON route
  for (const module of OPERATOR_MODULES as readonly OperatorModule[])
    router.route("/", operatorRoute({ ...module.route, schema: module.schema, submit: module.submit }));
  return router;
}
