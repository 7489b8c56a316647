package io.srdma.console;

import io.micrometer.core.instrument.Counter;
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
 *
 * <p>However steadily its client reads, an export still sending {@link
 * ConsoleConfig#exportMaxDuration} after its response started is cut off the same way (its
 * connection closed at once, what was not sent dropped), counted ({@code
 * srdma_console_export_timeouts_total}) and logged once, with nothing of the request: a client
 * taking a piece just within each write timeout would otherwise hold the place and the file for
 * hours. The client sees a download cut short.
 *
 * <p>Event loop only: created, started and ended on its connection's event loop.
 */
final class AuditExport {
  /** About how many characters of lines one chunk holds. */
  static final int CHUNK_CHARS = 256 << 10;

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(AuditExport.class);

  private final RoutingContext ctx;
  private final AuditReader.Cursor cursor;
  private final HeavyWork heavy;
  private final HeavyWork.Permit permit;
  private final long maxMillis;
  private final Counter timeouts;
  private boolean reading;
  private boolean gone;
  private boolean sent;
  private long capTimer = -1;

  /**
   * @param maxMillis how long the export may take, counted from {@link #start}
   * @param timeouts counts the exports cut off for it
   */
  AuditExport(
      RoutingContext ctx,
      AuditReader.Cursor cursor,
      HeavyWork heavy,
      HeavyWork.Permit permit,
      long maxMillis,
      Counter timeouts) {
    this.ctx = ctx;
    this.cursor = cursor;
    this.heavy = heavy;
    this.permit = permit;
    this.maxMillis = maxMillis;
    this.timeouts = timeouts;
  }

  /** Sends the chunks, then ends the response; the response's headers are set already. */
  void start() {
    HttpServerResponse r = ctx.response();
    r.setChunked(true);
    r.closeHandler(
        v -> {
          gone = true;
          cancelCap();
          if (!reading) {
            finish(); // waiting for a drain that will not come
          }
        });
    capTimer =
        ctx.vertx()
            .setTimer(
                maxMillis,
                id -> {
                  capTimer = -1;
                  overCap();
                });
    readNext();
  }

  /** The export is still sending at its maximum duration: cut off like a stalled one. */
  private void overCap() {
    if (sent || gone || ctx.response().closed()) {
      return;
    }
    timeouts.increment();
    LOG.info(
        "an audit export was still sending after {} ms (console export maximum duration),"
            + " {} bytes sent: closing its connection",
        maxMillis,
        ctx.response().bytesWritten());
    // the close handler ends the export: its file closed, its place given back
    WriteDeadlines.closeNow(ctx.request().connection());
  }

  private void cancelCap() {
    if (capTimer >= 0) {
      ctx.vertx().cancelTimer(capTimer);
      capTimer = -1;
    }
  }

  private void readNext() {
    reading = true;
    Future<String> chunk;
    try {
      chunk = heavy.submit(permit, () -> cursor.next(CHUNK_CHARS));
    } catch (RuntimeException e) {
      finish(); // the heavy pool is closed: the console is stopping
      cancelCap();
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
            cancelCap();
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
            WriteDeadlines.end(ctx, Buffer.buffer())
                .onComplete(
                    done -> {
                      sent = true;
                      cancelCap();
                    });
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
