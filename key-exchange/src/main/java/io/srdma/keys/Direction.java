package io.srdma.keys;

/** A direction of traffic; each has its own key and nonce prefix. */
public enum Direction {
  /** Records written by the initiator. */
  INITIATOR_TO_RESPONDER("i2r"),
  /** Records written by the responder. */
  RESPONDER_TO_INITIATOR("r2i");

  private final String label;

  Direction(String label) {
    this.label = label;
  }

  /** The short name used in HKDF labels ({@code i2r} or {@code r2i}). */
  public String label() {
    return label;
  }
}
