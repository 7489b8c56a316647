package io.srdma.bench.transport;

/**
 * What transports may need from the command line, shared by all transports of one bench: the RDMA
 * provider, the pipeline depth, how many messages throughput runs coalesce, the CPUs of each side,
 * and a dev CA created on first use and deleted at the end.
 */
public final class BenchContext implements AutoCloseable {
  private final String provider;
  private final PipelineDepth depth;
  private final int coalesce;
  private final CpuSplit cpus;
  private DevPki pki;

  /**
   * @param provider RDMA provider name for verbs-based transports ({@code soft}, {@code ibv},
   *     {@code auto})
   * @param depth outstanding messages for transports that bound them, at every size
   */
  public BenchContext(String provider, int depth) {
    this(provider, PipelineDepth.of(depth), 1);
  }

  /**
   * @param provider RDMA provider name for verbs-based transports
   * @param depth outstanding messages at every size
   * @param coalesce messages sent as one unit in throughput runs (1: each on its own)
   */
  public BenchContext(String provider, int depth, int coalesce) {
    this(provider, PipelineDepth.of(depth), coalesce);
  }

  /**
   * @param provider RDMA provider name for verbs-based transports
   * @param depth outstanding messages for transports that bound them, by message size
   * @param coalesce messages that follow each other sent as one unit in throughput runs (1: each on
   *     its own); see {@code srdma bench --coalesce}
   */
  public BenchContext(String provider, PipelineDepth depth, int coalesce) {
    this(provider, depth, coalesce, CpuSplit.NONE);
  }

  /**
   * @param provider RDMA provider name for verbs-based transports
   * @param depth outstanding messages at every size
   * @param coalesce messages sent as one unit in throughput runs (1: each on its own)
   * @param cpus where the writing and the receiving side run, the same for every transport
   */
  public BenchContext(String provider, PipelineDepth depth, int coalesce, CpuSplit cpus) {
    if (coalesce < 1) {
      throw new IllegalArgumentException("coalesce must be >= 1: " + coalesce);
    }
    this.provider = provider;
    this.depth = depth;
    this.coalesce = coalesce;
    this.cpus = java.util.Objects.requireNonNull(cpus, "cpus");
  }

  /** Where the writing and the receiving side run. */
  public CpuSplit cpus() {
    return cpus;
  }

  /** The RDMA provider name. */
  public String provider() {
    return provider;
  }

  /** The pipeline depth (outstanding messages) by message size. */
  public PipelineDepth depth() {
    return depth;
  }

  /** Messages sent as one unit in throughput runs, at most; 1 = each on its own. */
  public int coalesce() {
    return coalesce;
  }

  /** The dev CA and both credentials, created on the first call. */
  public synchronized DevPki pki() {
    if (pki == null) {
      pki = DevPki.create();
    }
    return pki;
  }

  @Override
  public synchronized void close() {
    if (pki != null) {
      pki.close();
      pki = null;
    }
  }
}
