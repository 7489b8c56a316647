package io.srdma.verbs.soft;

import io.srdma.verbs.internal.EmulatedMemoryWindow;

/** A type-2 memory window of the soft provider (see {@link EmulatedMemoryWindow}). */
final class SoftMemoryWindow extends EmulatedMemoryWindow<SoftProtectionDomain, SoftMemoryRegion> {
  SoftMemoryWindow(SoftProtectionDomain pd) {
    super(pd);
  }
}
