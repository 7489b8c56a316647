package io.srdma.verbs.ibv;

import io.srdma.verbs.VerbsException;

/**
 * Run-time cross-checks of the struct layouts: after each native call whose result this provider
 * reads, the fields it reads must agree with what it asked for (an MR's address and length, a CQ's
 * context). A disagreement means this libibverbs' structs differ from {@link Structs}; the provider
 * then refuses to run instead of reading garbage.
 */
final class LayoutProbe {
  private LayoutProbe() {}

  static void require(boolean consistent, String struct, String detail) {
    if (!consistent) {
      throw new VerbsException(
          VerbsException.Reason.PROVIDER_UNAVAILABLE,
          "layout_check",
          "struct "
              + struct
              + " of this libibverbs does not match the layout the ibv provider was built for ("
              + detail
              + "); refusing to run. Run StructLayoutTest against this rdma-core's headers");
    }
  }
}
