package io.srdma.channel.protocol;

/** Writes one message body into a {@link FrameWriter}'s buffer, usually through a flyweight. */
@FunctionalInterface
public interface BodyEncoder {
  /**
   * Encodes the body.
   *
   * @param buffer the writer's buffer
   * @param offset where the body starts
   * @param capacity the most bytes the body may take (the message type's maximum)
   * @return the body length
   */
  int encode(byte[] buffer, int offset, int capacity);
}
