package io.srdma.console;

import io.srdma.policy.AuditVerification;
import io.srdma.policy.Operation;
import io.srdma.policy.PolicyError;
import io.srdma.policy.ReloadResult;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Collection;
import java.util.List;
import java.util.Set;

/** The JSON shapes of the API (docs/api.md). */
final class Views {
  private Views() {}

  static JsonObject session(SessionInfo s) {
    return new JsonObject()
        .put("sessionId", s.sessionId())
        .put("identity", s.identity())
        .put("tenant", s.tenant())
        .put("since", s.since().toString())
        .put("epoch", s.epoch())
        .put("bytesIn", s.bytesIn())
        .put("bytesOut", s.bytesOut())
        .put("records", s.records());
  }

  static JsonObject region(RegionInfo r) {
    return new JsonObject()
        .put("tenant", r.tenant())
        .put("name", r.name())
        .put("size", r.size())
        .put("registeredBytes", r.registeredBytes())
        .put("liveGrants", r.liveGrants());
  }

  static JsonObject grant(GrantInfo g) {
    return new JsonObject()
        .put("grantId", g.grantId())
        .put("identity", g.identity())
        .put("tenant", g.tenant())
        .put("region", g.region())
        .put("offset", g.offset())
        .put("length", g.length())
        .put("operations", operations(g.operations()))
        .put("issuedAt", g.issuedAt().toString())
        .put("expiresAt", g.expiresAt().toString())
        .put("sessionId", g.sessionId());
  }

  static JsonArray operations(Set<Operation> ops) {
    JsonArray a = new JsonArray();
    for (Operation op : Operation.values()) {
      if (ops.contains(op)) {
        a.add(op.token());
      }
    }
    return a;
  }

  static JsonObject stats(ConsoleStats s, long consoleLoginFailures, long timeMillis) {
    return new JsonObject()
        .put("time", timeMillis)
        .put("bytesMoved", s.bytesMoved())
        .put("recordsOpened", s.recordsOpened())
        .put("recordsRejected", s.recordsRejected())
        .put("operations", s.operations())
        .put("sessions", s.sessions())
        .put("liveGrants", s.liveGrants())
        .put("denials", s.denials())
        .put("remoteAccessErrors", s.remoteAccessErrors())
        .put("authFailures", s.authFailures())
        .put("consoleLoginFailures", consoleLoginFailures);
  }

  static JsonArray errors(List<PolicyError> errors) {
    JsonArray a = new JsonArray();
    for (PolicyError e : errors) {
      a.add(
          new JsonObject()
              .put("line", e.line())
              .put("column", e.column())
              .put("reason", e.reason())
              .put("text", e.toString()));
    }
    return a;
  }

  static JsonArray diff(List<LineDiff.Line> lines) {
    JsonArray a = new JsonArray();
    for (LineDiff.Line l : lines) {
      a.add(
          new JsonObject()
              .put("op", String.valueOf(l.op()))
              .put("old", l.oldLine())
              .put("new", l.newLine())
              .put("text", l.text()));
    }
    return a;
  }

  static JsonObject reload(ReloadResult r) {
    JsonArray forbidden = new JsonArray();
    for (ReloadResult.ForbiddenGrant f : r.forbidden()) {
      forbidden.add(
          new JsonObject()
              .put("grantId", f.grant().id())
              .put("identity", f.grant().identity())
              .put("tenant", f.grant().tenant())
              .put("region", f.grant().region())
              .put("reason", f.reason().name())
              .put("detail", f.detail()));
    }
    return new JsonObject()
        .put("applied", true)
        .put("sha256", r.current().sha256())
        .put("previousSha256", r.previous().sha256())
        .put("forbidden", forbidden);
  }

  static JsonObject verification(AuditVerification v, int files) {
    return new JsonObject()
        .put("intact", v.intact())
        .put("files", files)
        .put("lines", v.lines())
        .put("firstSeq", v.firstSeq())
        .put("lastSeq", v.lastSeq())
        .put("head", v.head())
        .put("brokenFile", v.brokenFile() == null ? null : v.brokenFile().getFileName().toString())
        .put("brokenLine", v.brokenLine())
        .put("problem", v.problem())
        .put("summary", v.summary());
  }

  static JsonArray array(Collection<JsonObject> items) {
    return new JsonArray(List.copyOf(items));
  }
}
