package io.srdma.bench.transport;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/** The transports {@code srdma bench} knows, in the order of its tables. */
public final class Transports {
  /** Creates one transport for one bench. */
  @FunctionalInterface
  public interface Factory {
    BenchTransport create(BenchContext context);
  }

  /** Baseline for the "vs tls-jdk" ratios. */
  public static final String TLS_BASELINE = JdkTlsTransport.NAME;

  /** Baseline for the "vs plain-write" ratios. */
  public static final String RDMA_BASELINE = PlainWriteTransport.NAME;

  /**
   * Name to factory, in table order. Adding a transport is one line here; every transport here is
   * in the default {@code --transports}.
   */
  public static final Map<String, Factory> REGISTRY = registry();

  private Transports() {}

  private static Map<String, Factory> registry() {
    Map<String, Factory> m = new LinkedHashMap<>();
    m.put(JdkTlsTransport.NAME, ctx -> new JdkTlsTransport(ctx.pki(), ctx.coalesce(), ctx.cpus()));
    m.put(NettyTlsTransport.NAME, ctx -> new NettyTlsTransport(ctx.pki(), ctx.cpus()));
    m.put(
        PlainWriteTransport.NAME,
        ctx -> new PlainWriteTransport(ctx.provider(), ctx.depth(), ctx.coalesce(), ctx.cpus()));
    m.put(
        SealedTransport.NAME,
        ctx -> new SealedTransport(ctx.provider(), ctx.depth(), ctx.coalesce(), ctx.cpus()));
    return Collections.unmodifiableMap(m);
  }
}
