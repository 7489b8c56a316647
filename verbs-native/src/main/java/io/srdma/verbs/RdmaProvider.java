package io.srdma.verbs;

import java.util.List;

/**
 * A verbs provider (the SPI): one implementation per transport, found with {@link
 * java.util.ServiceLoader} and chosen by name through {@link RdmaProviders}. Mirrors rdma-core's
 * provider model: one API, providers side by side.
 */
public interface RdmaProvider {
  /** The name users select it by, such as {@code soft} or {@code ibv}. */
  String name();

  /**
   * Whether this provider can run here, and if not why.
   *
   * @return null when usable, else a sentence naming what is missing (a library, a device)
   */
  String unavailableReason();

  /**
   * The devices this provider sees.
   *
   * @throws VerbsException PROVIDER_UNAVAILABLE when {@link #unavailableReason()} is not null
   */
  List<Device> devices();
}
