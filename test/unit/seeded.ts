export { seeded } from "../../src/lib/seeded";
