package io.srdma.console;

import io.micrometer.core.instrument.Counter;
import io.vertx.core.AsyncResult;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.RoutingContext;

/**
 * Bounds how long a client may leave what the console sends it untaken (nginx's {@code
 * send_timeout}), so that a client that asks for an export and then reads it slowly, or never (its
 * TCP window at zero), holds nothing for ever: its heavy-request place, the export's open log file,
 * the memory of its answer.
 *
 * <p>What a route sends goes out through {@link #write} and {@link #end}, in pieces of at most
 * {@value #PIECE_BYTES} bytes. While a response has pieces waiting to be sent, one must have gone
 * out (into the kernel's socket buffer) within the timeout of its being written or of the previous
 * one going out; else the connection is closed at once, what was not sent dropped, and the response
 * abandoned as if its client had hung up (an export's place and file given back). The event is
 * counted ({@code srdma_console_response_write_timeouts_total}) and logged at debug level, without
 * anything of the request. A piece goes out when the kernel takes more, each time about a third of
 * the connection's socket send buffer has drained (which Linux grows with the connection, to 4 MiB
 * by default): a client that keeps taking that much per timeout is not cut here, however long its
 * answer ({@link AuditExport} bounds an export as a whole).
 *
 * <p>Why not {@link HttpConnection#close()}: Vert.x flushes what is queued before it closes, which
 * a client that takes nothing never lets happen; the connection is closed below Vert.x's HTTP
 * layer, as its own idle timeout does.
 *
 * <p>The handlers run on the connection's event loop: each response's state is confined to it.
 */
final class WriteDeadlines {
  /** Most bytes one written piece holds: a TLS record's worth. */
  static final int PIECE_BYTES = 16 << 10;

  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(WriteDeadlines.class);

  /** Where {@link #request} leaves the response's state for {@link #write} and {@link #end}. */
  private static final String KEY = "srdma.write.deadline";

  private final Vertx vertx;
  private final long timeoutMillis;
  private final Counter timeouts;

  /**
   * @param vertx the console's Vert.x, for the timers
   * @param timeoutMillis how long a piece waiting to be sent may wait for the client to take it
   * @param timeouts counts the connections closed for it
   */
  WriteDeadlines(Vertx vertx, long timeoutMillis, Counter timeouts) {
    this.vertx = vertx;
    this.timeoutMillis = timeoutMillis;
    this.timeouts = timeouts;
  }

  /** First handler of every request: what its response sends is watched. */
  void request(RoutingContext ctx) {
    ctx.put(KEY, new Sending(ctx));
    ctx.next();
  }

  /**
   * Writes data to a response in pieces under the deadline; the future completes when the last
   * piece has gone out (fails if the connection closed first).
   */
  static Future<Void> write(RoutingContext ctx, Buffer data) {
    Sending s = ctx.get(KEY);
    HttpServerResponse r = ctx.response();
    if (s == null) {
      return r.write(data);
    }
    Future<Void> last = Future.succeededFuture();
    for (int from = 0; from < data.length(); from += PIECE_BYTES) {
      last = s.track(r.write(data.slice(from, Math.min(data.length(), from + PIECE_BYTES))));
    }
    return last;
  }

  /**
   * Ends a response with data, sent in pieces under the deadline (a response not chunked gets its
   * {@code Content-Length} first); the future completes when all of it has gone out.
   */
  static Future<Void> end(RoutingContext ctx, Buffer data) {
    Sending s = ctx.get(KEY);
    HttpServerResponse r = ctx.response();
    if (s == null) {
      return r.end(data);
    }
    if (data.length() > PIECE_BYTES && ctx.request().method() != HttpMethod.HEAD) {
      if (!r.isChunked() && !r.headers().contains(HttpHeaders.CONTENT_LENGTH)) {
        r.putHeader(HttpHeaders.CONTENT_LENGTH, Integer.toString(data.length()));
      }
      write(ctx, data);
      return s.track(r.end());
    }
    return s.track(r.end(data));
  }

  /** One response's pieces not yet sent and the timer on them; event loop only. */
  private final class Sending {
    private final RoutingContext ctx;
    private int waiting;
    private long timer = -1;
    private boolean cut;

    Sending(RoutingContext ctx) {
      this.ctx = ctx;
    }

    Future<Void> track(Future<Void> sent) {
      if (sent.isComplete() || cut) {
        return sent;
      }
      waiting++;
      if (timer < 0) {
        arm();
      }
      return sent.andThen(this::wentOut);
    }

    private void wentOut(AsyncResult<Void> ar) {
      waiting--;
      if (timer >= 0) {
        vertx.cancelTimer(timer);
        timer = -1;
      }
      if (waiting > 0 && ar.succeeded() && !cut) {
        arm(); // progress: the next piece gets a timeout of its own
      }
    }

    private void arm() {
      timer =
          vertx.setTimer(
              timeoutMillis,
              id -> {
                timer = -1;
                late();
              });
    }

    private void late() {
      if (cut || waiting == 0) {
        return;
      }
      cut = true;
      timeouts.increment();
      LOG.debug(
          "the client took none of its response within {} ms: closing the connection",
          timeoutMillis);
      closeNow(ctx.request().connection());
    }
  }

  /** Closes a connection without waiting for what is queued on it to be sent. */
  static void closeNow(HttpConnection c) {
    if (c instanceof io.vertx.core.net.impl.ConnectionBase base) {
      base.channelHandlerContext().close();
    } else {
      LOG.warn("not a Vert.x connection ({}): closed after a flush", c.getClass().getName());
      c.close();
    }
  }
}
