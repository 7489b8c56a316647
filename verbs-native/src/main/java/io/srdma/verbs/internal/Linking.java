package io.srdma.verbs.internal;

import java.lang.invoke.MethodHandle;

/**
 * One JDK's foreign-function API, reached by reflection (this module is compiled for Java 17):
 * {@link ForeignLinking} for Java 22+'s {@code java.lang.foreign}, {@link IncubatorLinking} for
 * Java 17's {@code jdk.incubator.foreign}. Implementations are thread-safe.
 */
interface Linking {
  /**
   * {@code name} (a file name the dynamic linker resolves, e.g. a soname) loaded, as an opaque
   * handle for {@link #symbol}; the library stays loaded for the life of the JVM.
   *
   * @throws IllegalArgumentException when it does not load
   * @throws ReflectiveOperationException when the API misbehaves
   */
  Object library(String name) throws ReflectiveOperationException;

  /**
   * The address of {@code symbol} in {@code library} (from {@link #library}), or 0 when it has
   * none.
   *
   * @throws ReflectiveOperationException when the API misbehaves
   */
  long symbol(Object library, String symbol) throws ReflectiveOperationException;

  /**
   * The function at {@code address} as a downcall of type {@code (arguments) result} that makes no
   * thread-state transition; each type {@code int} or {@code long}.
   *
   * @throws IllegalArgumentException when a type is neither, or the linker refuses
   * @throws ReflectiveOperationException when the API misbehaves
   */
  MethodHandle downcall(long address, Class<?> result, Class<?>... arguments)
      throws ReflectiveOperationException;

  /** What the downcalls are called, e.g. {@code FFM downcalls}. */
  String kind();
}
