package io.srdma.console;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.RoutingContext;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Bounds how long a client may take to send what the console has to read, so that sending it a byte
 * at a time (slowloris: each byte keeps the idle timeout away) holds nothing for ever:
 *
 * <ul>
 *   <li>a request's head (line and headers) must have arrived within the timeout of its connection
 *       opening, or of the connection's previous exchange ending; else the connection is closed. An
 *       idle keep-alive connection is closed the same way;
 *   <li>a request's body must have arrived within the timeout of its head. Else a request not yet
 *       answered is answered {@code 408 request_timeout} (its body budget and heavy-request place
 *       are given back as it ends) and the connection is closed; one already answered (a refused
 *       body still arriving, to be discarded) has its connection closed.
 * </ul>
 *
 * <p>A response that takes long (the event stream, an export) is not bounded here: its request has
 * been read ({@link WriteDeadlines} bounds how long its client may leave it untaken). The handlers
 * run on the server's event loop; the table of connections is concurrent.
 */
final class ReadDeadlines {
  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(ReadDeadlines.class);

  private final Vertx vertx;
  private final long timeoutMillis;
  private final Map<HttpConnection, Connection> open = new ConcurrentHashMap<>();

  /**
   * @param vertx the console's Vert.x, for the timers
   * @param timeoutMillis how long a request's head, and then its body, may take to arrive
   */
  ReadDeadlines(Vertx vertx, long timeoutMillis) {
    this.vertx = vertx;
    this.timeoutMillis = timeoutMillis;
  }

  /** A connection was accepted: its first request's head must come within the timeout. */
  void opened(HttpConnection c) {
    Connection state = new Connection(c);
    open.put(c, state);
    state.awaitHead();
  }

  /** A connection closed: its timers are cancelled. */
  void closed(HttpConnection c) {
    Connection state = open.remove(c);
    if (state != null) {
      state.cancelHead();
    }
  }

  /** First handler of every request: its head has come; its body must within the timeout. */
  void request(RoutingContext ctx) {
    HttpServerRequest req = ctx.request();
    Connection state = open.get(req.connection());
    if (state != null) {
      state.requestStarted();
    }
    Exchange exchange = new Exchange(state);
    if (req.isEnded()) {
      exchange.requestEnded();
    } else {
      long timer = vertx.setTimer(timeoutMillis, id -> late(ctx));
      req.end()
          .onComplete(
              ar -> {
                vertx.cancelTimer(timer);
                exchange.requestEnded();
              });
    }
    ctx.addEndHandler(ar -> exchange.responseEnded());
    ctx.next();
  }

  /** The timer of a request whose body had not all come. */
  private void late(RoutingContext ctx) {
    HttpServerRequest req = ctx.request();
    if (req.isEnded()) {
      return;
    }
    HttpConnection c = req.connection();
    LOG.debug("request body not received within {} ms: closing the connection", timeoutMillis);
    if (ctx.response().ended() || ctx.response().closed()) {
      c.close(); // answered already; what still trickles in would only be discarded
      return;
    }
    ctx.response().putHeader("Connection", "close");
    ctx.addEndHandler(ar -> c.close());
    ctx.fail(
        new ApiException(
            408,
            "request_timeout",
            "the request body did not arrive within "
                + millis(timeoutMillis)
                + " of its headers; the connection is closed"));
  }

  private static String millis(long ms) {
    return ms % 1000 == 0 ? ms / 1000 + " s" : ms + " ms";
  }

  /** One request and its response: when both have ended, the connection awaits the next head. */
  private static final class Exchange {
    private final Connection connection;
    private boolean requestEnded;
    private boolean responseEnded;

    Exchange(Connection connection) {
      this.connection = connection;
    }

    void requestEnded() {
      requestEnded = true;
      done();
    }

    void responseEnded() {
      responseEnded = true;
      done();
    }

    private void done() {
      if (requestEnded && responseEnded && connection != null) {
        connection.requestDone();
        requestEnded = false; // once
      }
    }
  }

  /** A connection's state; event loop only. */
  private final class Connection {
    private final HttpConnection connection;
    private int active;
    private long headTimer = -1;

    Connection(HttpConnection connection) {
      this.connection = connection;
    }

    void awaitHead() {
      cancelHead();
      headTimer =
          vertx.setTimer(
              timeoutMillis,
              id -> {
                LOG.debug("no request head within {} ms: closing the connection", timeoutMillis);
                connection.close();
              });
    }

    void cancelHead() {
      if (headTimer >= 0) {
        vertx.cancelTimer(headTimer);
        headTimer = -1;
      }
    }

    void requestStarted() {
      active++;
      cancelHead();
    }

    void requestDone() {
      active--;
      if (active == 0 && open.containsKey(connection)) {
        awaitHead();
      }
    }
  }
}
