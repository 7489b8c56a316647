package io.srdma.bench.transport;

import java.util.Set;

/**
 * Who owns what in a {@link LoadRun}'s process: the threads and listening ports the host started
 * (told apart by what existed before it), the process's resources at the run's sample points (and
 * the host process's, with {@code --host-process}), and the {@link LoadFootprint} made of them.
 */
final class LoadCensus {
  private final Set<Long> beforeHost;
  private final Set<Long> hostStart;
  private final Set<Integer> hostPorts;
  private final Set<Integer> neitherPorts;
  private final LoadHostProcess hostProcess;

  /** One sample point: this process, the host's process (or null), threads and descriptors. */
  record Snapshot(
      LoadSample sample, LoadHostProcess.Sample host, ThreadCensus threads, FdCensus fds) {}

  /**
   * @param beforeHost the threads before the host started
   * @param hostStart the threads the host started (none when it runs in {@code hostProcess})
   * @param hostPorts the ports the host listens on (none when it runs in {@code hostProcess})
   * @param neitherPorts the ports this process listened on before the host started
   * @param hostProcess the host's process, or null when the host is in this one
   */
  LoadCensus(
      Set<Long> beforeHost,
      Set<Long> hostStart,
      Set<Integer> hostPorts,
      Set<Integer> neitherPorts,
      LoadHostProcess hostProcess) {
    this.beforeHost = beforeHost;
    this.hostStart = hostStart;
    this.hostPorts = hostPorts;
    this.neitherPorts = neitherPorts;
    this.hostProcess = hostProcess;
  }

  /** Resources now: this process's, the host process's, threads, then descriptors. */
  Snapshot take() {
    LoadSample sample = LoadSample.take();
    LoadHostProcess.Sample host = hostProcess != null ? hostProcess.sample() : null;
    ThreadCensus threads = threads();
    FdCensus fds = FdCensus.take(hostPorts, neitherPorts);
    return new Snapshot(sample, host, threads, fds);
  }

  /** This process's live threads now, attributed. */
  ThreadCensus threads() {
    return ThreadCensus.take(beforeHost, hostStart);
  }

  /**
   * Issue 17's figures. With the host in its own process each process is one side: the host's
   * figures are its process's (sampled once more now, for its threads at the end), the clients'
   * this one's.
   */
  LoadFootprint footprint(
      LoadConfig config,
      Snapshot idle,
      Snapshot loaded,
      ThreadCensus threadsEnd,
      long connectNanos,
      double floor,
      int floorCount) {
    if (hostProcess != null) {
      LoadHostProcess.Sample hostEnd = hostProcess.sample();
      return new LoadFootprint(
          config.sessions(),
          idle.sample(),
          loaded.sample(),
          sides(idle.host(), idle.threads()),
          sides(loaded.host(), loaded.threads()),
          sides(hostEnd, threadsEnd),
          new FdCensus((int) idle.host().process().fds(), (int) idle.sample().fds(), 0),
          new FdCensus((int) loaded.host().process().fds(), (int) loaded.sample().fds(), 0),
          LoadRun.recordBufferBytes(config),
          connectNanos,
          floor,
          floorCount,
          LoadSample.fdLimit(),
          idle.host().process(),
          loaded.host().process());
    }
    return new LoadFootprint(
        config.sessions(),
        idle.sample(),
        loaded.sample(),
        idle.threads(),
        loaded.threads(),
        threadsEnd,
        idle.fds(),
        loaded.fds(),
        LoadRun.recordBufferBytes(config),
        connectNanos,
        floor,
        floorCount,
        LoadSample.fdLimit());
  }

  /**
   * Threads per side with the host in its own process: the host's are its process's host threads
   * (those it started while starting and {@code srdma-host-*}; any other there counted with them),
   * the clients' this process's non-bench threads; the bench's both processes' own.
   */
  private static ThreadCensus sides(LoadHostProcess.Sample h, ThreadCensus here) {
    return new ThreadCensus(
        h.hostThreads() + h.otherThreads(),
        here.host() + here.client(),
        here.bench() + h.benchThreads(),
        here.clientByName());
  }
}
