package io.srdma.channel.record;

import java.lang.invoke.MethodHandle;
import java.lang.reflect.Array;
import java.lang.reflect.InvocationTargetException;
import java.util.Optional;

/**
 * libgcrypt's per-record cipher calls bound as Java 22+ foreign-function downcalls ({@code
 * java.lang.foreign}, {@code Linker.Option.critical}): the calls are short, never block and never
 * call back, so they run without a thread-state transition, where jnr-ffi's JNI stubs take one per
 * call — eight calls per 64 B record sealed and opened. Every argument is an address, a size or a
 * handle passed as a {@code long} (LP64), the result the {@code int} gcry_error_t, so each handle
 * is of a primitive type that this class, compiled for Java 17, calls with {@code invokeExact}; the
 * foreign-function API itself is reached by reflection, once, when the class initialises.
 *
 * <p>Bound on Java 22 or newer unless {@value #PROPERTY}{@code =jnr}; otherwise {@link
 * #unavailable()} says why and libgcrypt is called through jnr-ffi. Used only once {@link
 * LibGcrypt} loaded the same library and checked its version (this class never refers to that one,
 * so their initialisations cannot wait on each other). Which binding is in use is part of the
 * provider's version string ({@code srdma doctor}, {@code srdma bench}, the start-up log).
 * Immutable and thread-safe.
 */
final class GcryptDowncalls {
  /** System property: {@code jnr} keeps libgcrypt on jnr-ffi on Java 22+ too (comparisons). */
  static final String PROPERTY = "srdma.gcrypt.calls";

  private static final String UNAVAILABLE;
  static final MethodHandle SETIV;
  static final MethodHandle AUTHENTICATE;
  static final MethodHandle ENCRYPT;
  static final MethodHandle DECRYPT;
  static final MethodHandle GETTAG;
  static final MethodHandle CHECKTAG;

  static {
    MethodHandle[] h = new MethodHandle[6];
    String why = null;
    if (Runtime.version().feature() < 22) {
      why = "Java " + Runtime.version().feature() + " has no foreign-function API (22+)";
    } else if ("jnr".equals(System.getProperty(PROPERTY))) {
      why = "-D" + PROPERTY + "=jnr";
    } else {
      try {
        Binder b = new Binder();
        h[0] = b.bind("gcry_cipher_setiv", 3);
        h[1] = b.bind("gcry_cipher_authenticate", 3);
        h[2] = b.bind("gcry_cipher_encrypt", 5);
        h[3] = b.bind("gcry_cipher_decrypt", 5);
        h[4] = b.bind("gcry_cipher_gettag", 3);
        h[5] = b.bind("gcry_cipher_checktag", 3);
      } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
        Throwable cause = e instanceof InvocationTargetException i ? i.getCause() : e;
        why = "binding the downcalls failed: " + cause;
        h = new MethodHandle[6];
      }
    }
    UNAVAILABLE = why;
    SETIV = h[0];
    AUTHENTICATE = h[1];
    ENCRYPT = h[2];
    DECRYPT = h[3];
    GETTAG = h[4];
    CHECKTAG = h[5];
  }

  private GcryptDowncalls() {}

  /** Why the downcalls are not bound, or null when they are. */
  static String unavailable() {
    return UNAVAILABLE;
  }

  /** {@code Linker}, {@code SymbolLookup} and the layouts, found by name (compiled for Java 17). */
  private static final class Binder {
    private final Object linker;
    private final Object lookup;
    private final Class<?> linkerClass;
    private final Class<?> lookupClass;
    private final Class<?> layoutClass;
    private final Class<?> descriptorClass;
    private final Class<?> segmentClass;
    private final Object javaLong;
    private final Object javaInt;
    private final Object options;

    Binder() throws ReflectiveOperationException {
      linkerClass = Class.forName("java.lang.foreign.Linker");
      lookupClass = Class.forName("java.lang.foreign.SymbolLookup");
      layoutClass = Class.forName("java.lang.foreign.MemoryLayout");
      descriptorClass = Class.forName("java.lang.foreign.FunctionDescriptor");
      segmentClass = Class.forName("java.lang.foreign.MemorySegment");
      Class<?> arena = Class.forName("java.lang.foreign.Arena");
      Class<?> values = Class.forName("java.lang.foreign.ValueLayout");
      Class<?> option = Class.forName("java.lang.foreign.Linker$Option");
      linker = linkerClass.getMethod("nativeLinker").invoke(null);
      // LibGcrypt's names in its order, so dlopen finds the library jnr-ffi loaded (the same
      // mapping); that one's version was checked there, and only then are these calls used
      Object found = null;
      InvocationTargetException last = null;
      for (String name : new String[] {"libgcrypt.so.20", System.mapLibraryName("gcrypt")}) {
        try {
          found =
              lookupClass
                  .getMethod("libraryLookup", String.class, arena)
                  .invoke(null, name, arena.getMethod("global").invoke(null));
          break;
        } catch (InvocationTargetException e) {
          last = e; // IllegalArgumentException: no such library
        }
      }
      if (found == null) {
        throw last;
      }
      lookup = found;
      javaLong = values.getField("JAVA_LONG").get(null);
      javaInt = values.getField("JAVA_INT").get(null);
      options = Array.newInstance(option, 1);
      Array.set(options, 0, option.getMethod("critical", boolean.class).invoke(null, false));
    }

    /** {@code int symbol(long, ...)} with {@code longs} arguments. */
    MethodHandle bind(String symbol, int longs) throws ReflectiveOperationException {
      Optional<?> address =
          (Optional<?>) lookupClass.getMethod("find", String.class).invoke(lookup, symbol);
      if (address.isEmpty()) {
        throw new NoSuchMethodException("libgcrypt has no " + symbol);
      }
      Object arguments = Array.newInstance(layoutClass, longs);
      for (int i = 0; i < longs; i++) {
        Array.set(arguments, i, javaLong);
      }
      Object descriptor =
          descriptorClass
              .getMethod("of", layoutClass, arguments.getClass())
              .invoke(null, javaInt, arguments);
      return (MethodHandle)
          linkerClass
              .getMethod("downcallHandle", segmentClass, descriptorClass, options.getClass())
              .invoke(linker, address.get(), descriptor, options);
    }
  }
}
