package io.srdma.console;

import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.RoutingContext;

/**
 * Streams an export to the client a chunk at a time, reading the next chunk (on a worker) only when
 * the client has taken the last (back-pressure): it holds about one chunk, whatever the log's size.
 * A read that fails after the first chunk went out resets the stream, so a cut-short download fails
 * visibly rather than looking complete. The chunks are read on the heavy pool under the export's
 * place ({@link HeavyWork}), given back once the export ends, however it ends: a client that leaves
 * what was sent untaken past the write timeout ({@link WriteDeadlines}) has its connection closed,
 * which ends it.
 */
final class AuditExport {
  /** About how many characters of lines one chunk holds. */
  static final int CHUNK_CHARS = 256 << 10;

  private final RoutingContext ctx;
  private final AuditReader.Cursor cursor;
  private final HeavyWork heavy;
  private final HeavyWork.Permit permit;
  private boolean reading;
  private boolean gone;

  AuditExport(
      RoutingContext ctx, AuditReader.Cursor cursor, HeavyWork heavy, HeavyWork.Permit permit) {
    this.ctx = ctx;
    this.cursor = cursor;
    this.heavy = heavy;
    this.permit = permit;
  }

  /** Sends the chunks, then ends the response; the response's headers are set already. */
  void start() {
    HttpServerResponse r = ctx.response();
    r.setChunked(true);
    r.closeHandler(
        v -> {
          gone = true;
          if (!reading) {
            finish(); // waiting for a drain that will not come
          }
        });
    readNext();
  }

  private void readNext() {
    reading = true;
    Future<String> chunk;
    try {
      chunk = heavy.submit(permit, () -> cursor.next(CHUNK_CHARS));
    } catch (RuntimeException e) {
      finish(); // the heavy pool is closed: the console is stopping
      ctx.response().reset();
      return;
    }
    chunk.onComplete(
        ar -> {
          reading = false;
          HttpServerResponse r = ctx.response();
          if (gone || r.closed()) {
            finish();
            return;
          }
          if (ar.failed()) {
            finish();
            if (r.headWritten()) {
              r.reset();
            } else {
              ctx.fail(ar.cause());
            }
            return;
          }
          String text = ar.result();
          if (text == null) {
            finish();
            WriteDeadlines.end(ctx, Buffer.buffer());
            return;
          }
          // in pieces the client must take in time (WriteDeadlines): one that stops reading has
          // its connection closed, which ends the export and gives its place back
          WriteDeadlines.write(ctx, Buffer.buffer(text));
          if (r.writeQueueFull()) {
            r.drainHandler(v -> readNext());
          } else {
            readNext();
          }
        });
  }

  /** Closes the cursor and gives the export's place back. */
  private void finish() {
    cursor.close();
    permit.release();
  }
}
