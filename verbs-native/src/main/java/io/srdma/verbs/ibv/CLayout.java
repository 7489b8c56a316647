package io.srdma.verbs.ibv;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The size of one C struct and the offsets of the fields this provider touches, as written in
 * {@link Structs}. A test compiles a C program against the real header and compares.
 */
final class CLayout {
  private final String struct;
  private final int size;
  private final Map<String, Integer> fields = new LinkedHashMap<>();

  private CLayout(String struct, int size) {
    this.struct = struct;
    this.size = size;
  }

  /** A layout of {@code struct <name>} of {@code size} bytes. */
  static CLayout of(String name, int size) {
    return new CLayout(name, size);
  }

  /** Adds a field by its C member designator, such as {@code wr.rdma.rkey}; returns this. */
  CLayout field(String designator, int offset) {
    fields.put(designator, offset);
    return this;
  }

  String struct() {
    return struct;
  }

  int size() {
    return size;
  }

  /** Member designator to offset, in declaration order. */
  Map<String, Integer> fields() {
    return Collections.unmodifiableMap(fields);
  }
}
