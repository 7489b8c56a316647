package io.srdma.channel;

import io.srdma.channel.protocol.ControlProxy;
import io.srdma.channel.record.SealingKeys;
import io.srdma.keys.KeyExchangeException;
import io.srdma.keys.KeySchedule;
import io.srdma.keys.RekeyPolicy;
import java.io.IOException;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client's send-key epochs: counts sealed records and bytes and moves to the next epoch when
 * the rekey policy says so (HKDF-Expand of the current secret, then REKEY to the host); one rekey
 * is outstanding at a time. {@link #sealed} is called under the writer's lock and allocates nothing
 * unless a rekey is due; {@link #acknowledged} on the control thread.
 */
final class KeyEpochs {
  private static final Logger LOG = LoggerFactory.getLogger(KeyEpochs.class);

  private final KeySchedule schedule;
  private final SealingKeys sealing;
  private final ControlProxy proxy;
  private final String name;
  private final long maxRecords;
  private final long maxBytes;
  private final long maxAgeNanos;
  private long records; // guarded by the writer's lock
  private long bytes;
  private long startNanos = System.nanoTime();
  private volatile boolean pending;
  private volatile Consumer<ChannelException> onFailure = e -> {};

  KeyEpochs(
      KeySchedule schedule,
      SealingKeys sealing,
      RekeyPolicy policy,
      ControlProxy proxy,
      String name) {
    this.schedule = schedule;
    this.sealing = sealing;
    this.proxy = proxy;
    this.name = name;
    this.maxRecords = policy.maxRecords();
    this.maxBytes = policy.maxBytes();
    this.maxAgeNanos = policy.maxAge().toNanos();
  }

  /** Who ends the session when a rekey fails. */
  void onFailure(Consumer<ChannelException> value) {
    onFailure = value;
  }

  int epoch() {
    return sealing.epoch();
  }

  /** {@code n} records of {@code b} plaintext bytes were posted; rekeys when due. */
  void sealed(int n, long b) {
    records += n;
    bytes += b;
    if (records < maxRecords && bytes < maxBytes && System.nanoTime() - startNanos < maxAgeNanos) {
      return;
    }
    if (pending) {
      return;
    }
    pending = true;
    try {
      schedule.rekey();
      sealing.rekey(schedule.sendKeys());
      records = 0;
      bytes = 0;
      startNanos = System.nanoTime();
      proxy.rekey(0, sealing.epoch());
      LOG.debug("{}: now sealing in epoch {}", name, sealing.epoch());
    } catch (IOException | KeyExchangeException e) {
      onFailure.accept(
          new ChannelException(
              ChannelException.Reason.SESSION_CLOSED, null, "rekey failed: " + e.getMessage(), e));
    }
  }

  /** REKEY from the host (control thread): the epoch it now opens. */
  void acknowledged(int epoch) {
    if (epoch == sealing.epoch()) {
      pending = false;
    }
  }

  void close() {
    schedule.close();
  }
}
