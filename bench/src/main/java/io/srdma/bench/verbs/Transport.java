package io.srdma.bench.verbs;

import java.io.IOException;

/** One way of moving {@code size}-byte messages between two endpoints on loopback. */
interface Transport extends AutoCloseable {
  /** Messages per {@link #streamBatch()}. */
  int BATCH = 32;

  /** Sends {@link #BATCH} messages one way, keeping the pipe full (bounded outstanding work). */
  void streamBatch() throws Exception;

  /** Sends one message and waits for the peer's answer (completion or echo). */
  void roundTrip() throws Exception;

  @Override
  void close() throws IOException;

  /**
   * Opens the transport called {@code name} for {@code size}-byte messages: {@code soft} (a batch
   * is one post list), {@code soft-single} (the same, one post per message) or {@code socket}.
   */
  static Transport open(String name, int size, boolean echo) throws Exception {
    return switch (name) {
      case "soft" -> new SoftWriteTransport(size);
      case "soft-single" -> new SoftWriteTransport(size, false);
      case "socket" -> new SocketTransport(size, echo);
      default -> throw new IllegalArgumentException("unknown transport " + name);
    };
  }
}
