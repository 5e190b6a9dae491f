/**
 * The named records of the interface (spec/agent-eval-challenge.md, "Named records"), as TypeBox
 * schemas: each route validates with them and /openapi.json publishes them under these names.
 * Part 1 of the service declares the submission records; the review and eval records join them
 * as their routes land.
 */

