package io.srdma.verbs;

/** An RDMA device ({@code struct ibv_device}). */
public interface Device {
  /** Device name, such as {@code soft0} or {@code rxe0}. */
  String name();

  /** Name of the provider that serves it. */
  String providerName();

  /**
   * Opens the device ({@code ibv_open_device}).
   *
   * @param options settings; validated with {@link DeviceOptions#conclude()}
   * @throws VerbsException when the device cannot be opened
   */
  DeviceContext open(DeviceOptions options);
}
