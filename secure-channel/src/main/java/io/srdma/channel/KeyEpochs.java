package io.srdma.channel;

import io.srdma.channel.protocol.ControlProxy;
import io.srdma.channel.protocol.ErrorCode;
import io.srdma.channel.record.SealingKeys;
import io.srdma.keys.KeyExchangeException;
import io.srdma.keys.KeySchedule;
import io.srdma.keys.RekeyPolicy;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client's send-key epochs: counts sealed records and bytes and moves to the next epoch when
 * the rekey policy says so (HKDF-Expand of the current secret, then REKEY to the host); one rekey
 * is outstanding at a time. The host must acknowledge a REKEY within the request timeout, else the
 * session ends ({@code TIMEOUT}, and ERROR TIMEOUT to the host): a host that never acknowledges
 * would otherwise stop every later rekey and keep the client sealing under one key past its policy.
 * {@link #sealed} is called under the writer's lock and allocates nothing unless a rekey is due;
 * {@link #acknowledged} on the control thread.
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
  private final ScheduledExecutorService timer;
  private final Executor worker;
  private final long ackTimeoutMillis;
  private volatile boolean pending;
  private volatile int pendingEpoch;
  private volatile ScheduledFuture<?> ackDeadline;
  private volatile Consumer<ChannelException> onFailure = e -> {};

  /**
   * @param timer runs the acknowledgement deadline, which hands its work to {@code worker} (it
   *     writes ERROR to the host and ends the session)
   * @param ackTimeout how long the host may take to acknowledge a REKEY
   */
  KeyEpochs(
      KeySchedule schedule,
      SealingKeys sealing,
      RekeyPolicy policy,
      ControlProxy proxy,
      String name,
      ScheduledExecutorService timer,
      Executor worker,
      Duration ackTimeout) {
    this.schedule = schedule;
    this.sealing = sealing;
    this.proxy = proxy;
    this.name = name;
    this.timer = timer;
    this.worker = worker;
    this.ackTimeoutMillis = ackTimeout.toMillis();
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
      int epoch = sealing.epoch();
      pendingEpoch = epoch;
      try {
        ackDeadline =
            timer.schedule(
                () -> worker.execute(() -> unacknowledged(epoch)),
                ackTimeoutMillis,
                TimeUnit.MILLISECONDS);
      } catch (RejectedExecutionException closing) {
        // the client is closing: nothing waits for the acknowledgement any more
      }
      proxy.rekey(0, epoch);
      LOG.debug("{}: now sealing in epoch {}", name, sealing.epoch());
    } catch (IOException | KeyExchangeException e) {
      onFailure.accept(
          new ChannelException(
              ChannelException.Reason.SESSION_CLOSED, null, "rekey failed: " + e.getMessage(), e));
    }
  }

  /** REKEY from the host (control thread): the epoch it now opens. */
  void acknowledged(int epoch) {
    if (pending && epoch == pendingEpoch) {
      pending = false;
      ScheduledFuture<?> deadline = ackDeadline;
      if (deadline != null) {
        deadline.cancel(false);
      }
    }
  }

  /** The acknowledgement deadline of the REKEY to {@code epoch} passed (a worker). */
  private void unacknowledged(int epoch) {
    if (!pending || pendingEpoch != epoch) {
      return; // acknowledged just in time
    }
    ChannelException e =
        new ChannelException(
            ChannelException.Reason.TIMEOUT,
            "REKEY to epoch " + epoch + " not acknowledged within " + ackTimeoutMillis + " ms");
    try {
      proxy.error(0, ErrorCode.TIMEOUT, "no answer within the deadline");
    } catch (IOException ignored) {
      // ending anyway
    }
    onFailure.accept(e);
  }

  void close() {
    pending = false; // closed: nothing waits for an acknowledgement any more
    ScheduledFuture<?> deadline = ackDeadline;
    if (deadline != null) {
      deadline.cancel(false);
    }
    schedule.close();
  }
}
