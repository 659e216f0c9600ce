// The research page's export links (src/research/exports.js): the generation filter goes in the URL.
import assert from "node:assert/strict";
import test from "node:test";

import { exportHref } from "../src/research/exports.js";

test("an export link carries the format, gzip and the generations asked for", () => {
  const url = "/api/projects/7/export/";
  assert.equal(exportHref(url, "prm800k", true), "/api/projects/7/export/?format=prm800k&gzip=1");
  assert.equal(exportHref(url, "trl-parquet", false, ""), "/api/projects/7/export/?format=trl-parquet");
  assert.equal(exportHref(url, "trl", true, " 3 "), "/api/projects/7/export/?format=trl&gzip=1&generation=3");
  assert.equal(exportHref(url, "prm800k", false, "2, 3,"), "/api/projects/7/export/?format=prm800k&generation=2,3");
});

test("the provenance columns are asked for with provenance=1, after the other filters", () => {
  const url = "/api/projects/7/export/";
  assert.equal(exportHref(url, "trl", true, "", true), "/api/projects/7/export/?format=trl&gzip=1&provenance=1");
  assert.equal(exportHref(url, "trl-parquet", false, "2,3", true),
    "/api/projects/7/export/?format=trl-parquet&generation=2,3&provenance=1");
  assert.equal(exportHref(url, "trl", true, "", false), "/api/projects/7/export/?format=trl&gzip=1");
});
