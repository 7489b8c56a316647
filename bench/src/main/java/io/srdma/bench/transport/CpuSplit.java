package io.srdma.bench.transport;

import io.srdma.verbs.CompletionProgress;
import io.srdma.verbs.CpuAffinity;
import io.srdma.verbs.CpuSet;
import io.srdma.verbs.DeviceOptions;

/**
 * Where a bench's two sides run ({@code srdma bench --writer-cpus/--receiver-cpus}): the writing
 * thread, with every thread it starts (they inherit its CPUs: the client's completion lanes and
 * soft responders, Netty's sender loop), on {@link #writer}; the receiving side's own threads on
 * {@link #receiver} — the host's openers and soft responders for {@code sealed}, the receiving
 * device's responders and the receiver thread for {@code plain-write}, the receiver thread for
 * {@code tls-jdk}, the server's event loop for {@code tls-netty}. Either may be null (that side is
 * left to the scheduler). The same split applies to every transport, so ratios within a round stay
 * paired. It also says who places the receiving side's incoming requests on {@code soft} ({@code
 * srdma bench --receive-progress}): the host's openers ({@code sealed}, {@code
 * HostOptions.openerProgress}) and plain-write's receiver thread alike. Immutable.
 *
 * @param writer the writing side's CPUs, or null
 * @param receiver the receiving side's CPUs, or null
 * @param receiveProgress who places the receiving side's incoming requests
 */
public record CpuSplit(CpuSet writer, CpuSet receiver, CompletionProgress receiveProgress) {
  /** Nothing pinned; the receiving threads place their own requests (the host's default). */
  public static final CpuSplit NONE = new CpuSplit(null, null);

  /** Writer and receiver CPUs; the receiving threads place their own requests. */
  public CpuSplit(CpuSet writer, CpuSet receiver) {
    this(writer, receiver, CompletionProgress.POLLER);
  }

  public CpuSplit {
    java.util.Objects.requireNonNull(receiveProgress, "receiveProgress");
  }

  /** The same CPUs with {@code progress} on the receiving side. */
  public CpuSplit withReceiveProgress(CompletionProgress progress) {
    return new CpuSplit(writer, receiver, progress);
  }

  /** Whether either side is pinned. */
  public boolean active() {
    return writer != null || receiver != null;
  }

  /** Restores a thread's CPUs when closed. */
  public interface Restore extends AutoCloseable {
    @Override
    void close();
  }

  /**
   * Pins the calling thread to {@link #writer} until the returned handle is closed (on the same
   * thread), which puts it back on the CPUs it had. A no-op without writer CPUs.
   *
   * @throws io.srdma.verbs.VerbsException when the set cannot be had exactly
   */
  public Restore pinWriter() {
    if (writer == null) {
      return () -> {};
    }
    CpuSet before = CpuAffinity.current();
    CpuAffinity.pinCurrentThread(writer);
    return () -> CpuAffinity.pinCurrentThread(before);
  }

  /** Pins the calling thread, a receiving side's own, to {@link #receiver}; no-op without. */
  void pinReceiver() {
    if (receiver != null) {
      CpuAffinity.pinCurrentThread(receiver);
    }
  }

  /** Device options for a receiving side's device: its soft responders on {@link #receiver}. */
  DeviceOptions receiverDevice() {
    return new DeviceOptions().responderCpus(receiver);
  }

  /** "writer CPUs 0, receiver CPUs 1", "receiver CPUs 1", or "unpinned". */
  public String describe() {
    if (!active()) {
      return "unpinned";
    }
    StringBuilder b = new StringBuilder();
    if (writer != null) {
      b.append("writer CPUs ").append(writer);
    }
    if (receiver != null) {
      b.append(b.length() > 0 ? ", " : "").append("receiver CPUs ").append(receiver);
    }
    return b.toString();
  }
}
