package io.srdma.bench.transport;

import io.srdma.channel.Access;
import io.srdma.channel.ClientOptions;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One client of a {@link LoadRun}, its grants and its flow control: it writes one-record messages
 * round-robin over its grants ({@link Slot}s), at most {@code window} not yet opened by the host
 * and at most {@code window} not yet completed, on the run's driver threads. The revoker takes
 * slots out of {@link #active} and puts them back, holding this session's lock.
 */
final class LoadSession {
  final LoadRun run;
  final int index;
  final int local; // its index among its tenant's sessions
  final SecureRdmaClient client;
  final List<Slot> active = new ArrayList<>();
  final AtomicLong delivered = new AtomicLong();
  final AtomicLong completed = new AtomicLong();
  final AtomicBoolean scheduled = new AtomicBoolean();
  final ByteBuffer message;
  long expected; // host's receiver thread only
  final AtomicLong issued = new AtomicLong();
  int cursor; // guarded by this
  volatile boolean failed;

  /** One grant in a session's rotation: a disjoint range of the tenant's region. */
  static final class Slot {
    final long offset;
    volatile RemoteGrant grant;
    final AtomicInteger outstanding = new AtomicInteger();
    volatile long lastSeq = -1;
    int next;

    Slot(long offset, RemoteGrant grant) {
      this.offset = offset;
      this.grant = grant;
    }
  }

  LoadSession(LoadRun run, int index, int local, ClientOptions o) {
    this.run = run;
    this.index = index;
    this.local = local;
    this.client = SecureRdmaClient.connect(o);
    client.onSessionLost(
        e -> {
          failed = true;
          run.error("session-lost:" + e.reason());
        });
    this.message = ByteBuffer.allocate(run.config.recordSize());
    byte[] fill = new byte[run.config.recordSize()];
    new Random(index).nextBytes(fill);
    message.put(fill).clear();
  }

  void requestGrants() {
    LoadConfig config = run.config;
    int g = config.grantsPerSession();
    List<CompletableFuture<RemoteGrant>> asked = new ArrayList<>();
    for (int k = 0; k < g; k++) {
      long offset = ((long) local * g + k) * config.grantLength();
      asked.add(
          client
              .requestGrant(
                  "data", EnumSet.of(Access.WRITE), offset, config.grantLength(), LoadRun.TTL)
              .toCompletableFuture());
    }
    for (int k = 0; k < g; k++) {
      RemoteGrant grant = asked.get(k).join();
      active.add(new Slot(grant.offset(), grant));
    }
  }

  void kick() {
    if (run.running.get() && !failed && scheduled.compareAndSet(false, true)) {
      run.driver.execute(this::pump);
    }
  }

  void pump() {
    scheduled.set(false);
    LoadConfig config = run.config;
    synchronized (this) {
      while (run.running.get()
          && !failed
          && issued.get() - delivered.get() < config.window()
          && issued.get() - completed.get() < config.window()
          && !active.isEmpty()) {
        Slot slot = active.get(cursor++ % active.size());
        long offset = (slot.next++ % config.slotsPerGrant()) * config.sealedRecord();
        long seq = issued.getAndIncrement();
        message.putInt(0, index).putLong(Integer.BYTES, seq);
        slot.lastSeq = seq;
        slot.outstanding.incrementAndGet();
        long start = System.nanoTime();
        CompletionStage<Void> unused =
            slot.grant
                .write(offset, message.duplicate().clear())
                .whenComplete((v, e) -> written(slot, start, e));
      }
    }
  }

  private void written(Slot slot, long start, Throwable e) {
    if (e != null) {
      failed = true;
      run.error("write:" + LoadRun.reason(e));
    } else {
      run.meter.written(start);
    }
    slot.outstanding.decrementAndGet();
    completed.incrementAndGet();
    kick();
  }
}
