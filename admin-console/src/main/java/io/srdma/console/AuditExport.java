package io.srdma.console;

import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.RoutingContext;

/**
 * Streams an export to the client a chunk at a time, reading the next chunk (on a worker) only when
 * the client has taken the last (back-pressure): it holds about one chunk, whatever the log's size.
 * A read that fails after the first chunk went out resets the stream, so a cut-short download fails
 * visibly rather than looking complete.
 */
final class AuditExport {
  /** About how many characters of lines one chunk holds. */
  static final int CHUNK_CHARS = 256 << 10;

  private final RoutingContext ctx;
  private final AuditReader.Cursor cursor;
  private boolean reading;
  private boolean gone;

  AuditExport(RoutingContext ctx, AuditReader.Cursor cursor) {
    this.ctx = ctx;
    this.cursor = cursor;
  }

  /** Sends the chunks, then ends the response; the response's headers are set already. */
  void start() {
    HttpServerResponse r = ctx.response();
    r.setChunked(true);
    r.closeHandler(
        v -> {
          gone = true;
          if (!reading) {
            cursor.close(); // waiting for a drain that will not come
          }
        });
    readNext();
  }

  private void readNext() {
    reading = true;
    ctx.vertx()
        .executeBlocking(() -> cursor.next(CHUNK_CHARS), false)
        .onComplete(
            ar -> {
              reading = false;
              HttpServerResponse r = ctx.response();
              if (gone || r.closed()) {
                cursor.close();
                return;
              }
              if (ar.failed()) {
                cursor.close();
                if (r.headWritten()) {
                  r.reset();
                } else {
                  ctx.fail(ar.cause());
                }
                return;
              }
              String chunk = ar.result();
              if (chunk == null) {
                cursor.close();
                r.end();
                return;
              }
              r.write(chunk);
              if (r.writeQueueFull()) {
                r.drainHandler(v -> readNext());
              } else {
                readNext();
              }
            });
  }
}
