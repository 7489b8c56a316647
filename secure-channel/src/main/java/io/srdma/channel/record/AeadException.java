package io.srdma.channel.record;

/**
 * The data path's AES-256-GCM cannot be had as asked: a forced provider that is not available on
 * this machine or failed its known-answer test. Raised at start-up, never on a record.
 */
public final class AeadException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  AeadException(String message) {
    super(message);
  }

  AeadException(String message, Throwable cause) {
    super(message, cause);
  }
}
