package io.srdma.verbs.loopback;

import io.srdma.verbs.internal.EmulatedMemoryWindow;

/** A type-2 memory window of the loopback provider (see {@link EmulatedMemoryWindow}). */
final class LoopbackMemoryWindow
    extends EmulatedMemoryWindow<LoopbackProtectionDomain, LoopbackMemoryRegion> {
  LoopbackMemoryWindow(LoopbackProtectionDomain pd) {
    super(pd);
  }
}
