package io.srdma.verbs.internal;

import java.lang.invoke.MethodHandle;
import java.lang.reflect.InvocationTargetException;
import java.util.List;

/**
 * Binds short C functions as foreign-function downcalls that make no thread-state transition: Java
 * 22+'s {@code Linker.Option.critical(false)}, or on Java 17, when the JVM was started with {@code
 * --add-modules jdk.incubator.foreign --enable-native-access=ALL-UNNAMED} (the {@code srdma}
 * launcher does), {@code jdk.incubator.foreign}'s trivial calls. Where a JNI stub (jffi, jnr-ffi)
 * takes a transition each way, such a call takes none, but it also keeps its thread from a
 * safepoint until it returns, so only functions that take a few microseconds, never block and never
 * call back into Java may be bound here.
 *
 * <p>Every argument is a C pointer, size or handle passed as a {@code long} (LP64) or a C {@code
 * int} passed as an {@code int}; the result an {@code int} or a {@code long}. So each handle is of
 * a primitive type that code compiled for Java 17 calls with {@code invokeExact}; the
 * foreign-function API itself is reached by reflection, once, when this class first binds. Hold the
 * handles in finals: binding is slow, calling is not.
 *
 * <p>A binder is refused, and {@link #unavailable()} says why, on Java 18-21, on Java 17 without
 * those options, when the system property it was made for is {@code jnr} (comparisons, or an escape
 * hatch), or when the linker cannot be found; callers then keep their JNI binding and say so (never
 * silently).
 *
 * <p>Immutable and thread-safe; so are the handles it returns.
 */
public final class CriticalDowncalls {
  /** The property value that turns the downcalls off. */
  public static final String OFF = "jnr";

  private final String unavailable;

  private CriticalDowncalls(String unavailable) {
    this.unavailable = unavailable;
  }

  /**
   * A binder unless {@code -D<property>=jnr} or this JVM offers no downcalls (Java 18-21, Java 17
   * without {@code --add-modules jdk.incubator.foreign --enable-native-access=ALL-UNNAMED}, or no
   * linker).
   *
   * @param property the system property that can turn these downcalls off, e.g. {@code
   *     srdma.ibv.calls}
   */
  public static CriticalDowncalls unlessTurnedOff(String property) {
    String why = Linkers.UNAVAILABLE;
    if (why == null && OFF.equals(System.getProperty(property))) {
      why = "-D" + property + "=" + OFF;
    }
    return new CriticalDowncalls(why);
  }

  /**
   * True when this JVM can make the downcalls at all (Java 22+, or Java 17 started with the options
   * above), whatever a property says: a binder refused then is worth a log line.
   */
  public static boolean possibleHere() {
    return Linkers.UNAVAILABLE == null;
  }

  /**
   * What the downcalls of this JVM are called: {@code FFM downcalls} (Java 22+) or {@code FFM
   * downcalls (Java 17 incubator)}; null when {@link #possibleHere()} is false.
   */
  public static String kind() {
    return Linkers.INSTANCE == null ? null : Linkers.INSTANCE.kind();
  }

  /** True when {@link #bind} can be called. */
  public boolean available() {
    return unavailable == null;
  }

  /**
   * Why this binder is refused (Java version or options, the property, the linker), or null when it
   * is not.
   */
  public String unavailable() {
    return unavailable;
  }

  /**
   * The C function at {@code functionAddress} (a function pointer, e.g. read from an ops table) as
   * a critical downcall of type {@code (arguments) result}.
   *
   * @param result {@code int.class}, {@code long.class} or {@code void.class}
   * @param arguments each {@code long.class} (pointer, size, handle) or {@code int.class}
   * @throws IllegalStateException when {@link #available()} is false
   * @throws IllegalArgumentException naming the function when the address is 0, a type is not
   *     {@code int}/{@code long} or the linker refuses
   */
  public MethodHandle bind(long functionAddress, Class<?> result, Class<?>... arguments) {
    requireAvailable();
    String what = "the function at 0x" + Long.toHexString(functionAddress);
    if (functionAddress == 0) {
      throw new IllegalArgumentException("cannot bind a NULL function pointer");
    }
    try {
      return Linkers.INSTANCE.downcall(functionAddress, result, arguments);
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      throw failed(what, e);
    }
  }

  /**
   * {@code symbol} of the first of {@code libraries} that the dynamic linker loads (several names
   * for one library, e.g. its soname then {@link System#mapLibraryName}), as a critical downcall of
   * type {@code (arguments) result}. A library stays loaded for the life of the JVM.
   *
   * @throws IllegalStateException when {@link #available()} is false
   * @throws IllegalArgumentException naming the library and symbol when none of the names loads,
   *     the library has no such symbol, a type is not {@code int}/{@code long} or the linker
   *     refuses
   */
  public MethodHandle bind(
      List<String> libraries, String symbol, Class<?> result, Class<?>... arguments) {
    requireAvailable();
    Linking linking = Linkers.INSTANCE;
    Object lookup = null;
    String library = null;
    Throwable last = null;
    for (String name : libraries) {
      try {
        lookup = linking.library(name);
        library = name;
        break;
      } catch (ReflectiveOperationException | RuntimeException e) {
        last = e; // IllegalArgumentException: no such library; try the next name
      }
    }
    if (lookup == null) {
      throw new IllegalArgumentException(
          "binding " + symbol + " failed: none of " + libraries + " loads (" + last + ")", last);
    }
    String what = symbol + " of " + library;
    try {
      long address = linking.symbol(lookup, symbol);
      if (address == 0) {
        throw new IllegalArgumentException(library + " has no symbol " + symbol);
      }
      return linking.downcall(address, result, arguments);
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      throw failed(what, e);
    }
  }

  private void requireAvailable() {
    if (unavailable != null) {
      throw new IllegalStateException("no downcalls: " + unavailable);
    }
  }

  private static IllegalArgumentException failed(String what, Throwable e) {
    Throwable cause = e instanceof InvocationTargetException i ? i.getCause() : e;
    String why =
        cause instanceof IllegalArgumentException && cause.getMessage() != null
            ? cause.getMessage()
            : String.valueOf(cause);
    return new IllegalArgumentException("binding " + what + " failed: " + why, cause);
  }

  /** This JVM's foreign-function API, or why there is none, decided once. */
  private static final class Linkers {
    static final String UNAVAILABLE;
    static final Linking INSTANCE;

    static {
      int feature = Runtime.version().feature();
      Linking linking = null;
      String why = null;
      if (feature == 17 && ModuleLayer.boot().findModule(IncubatorLinking.MODULE).isEmpty()) {
        why =
            "Java 17 was started without "
                + IncubatorLinking.MODULE
                + " (its downcalls need "
                + IncubatorLinking.OPTIONS
                + "; the srdma launcher passes them)";
      } else if (feature > 17 && feature < 22) {
        why =
            "Java " + feature + " has no foreign-function API used here (17 with options, or 22+)";
      } else {
        try {
          linking = feature == 17 ? new IncubatorLinking() : new ForeignLinking();
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
          Throwable cause = e instanceof InvocationTargetException i ? i.getCause() : e;
          why =
              cause instanceof IllegalCallerException
                  ? "Java 17's foreign-function API refuses native access ("
                      + cause.getMessage()
                      + "): start the JVM with "
                      + IncubatorLinking.OPTIONS
                  : "the foreign-function linker could not be found: " + cause;
        }
      }
      INSTANCE = why == null ? linking : null;
      UNAVAILABLE = why;
    }
  }
}
