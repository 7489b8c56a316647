package io.srdma.verbs.internal;

import com.kenai.jffi.Library;
import java.lang.constant.Constable;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodType;
import java.lang.reflect.Array;
import java.lang.reflect.Method;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Java 17's {@code jdk.incubator.foreign} (JEP 412), found by name: downcalls whose function
 * descriptor carries {@code FunctionDescriptor.TRIVIAL_ATTRIBUTE_NAME} (no thread-state transition,
 * Java 17's name for a critical call). Java 17 resolves the module only when the JVM starts with
 * {@code --add-modules jdk.incubator.foreign}, and lets code call its linker only with {@code
 * --enable-native-access=} naming that code's module ({@code ALL-UNNAMED} on the class path); the
 * {@code srdma} launcher passes both on Java 17. Libraries are opened by jffi (the incubator's
 * lookup finds only what the caller's class loader loaded by path) and kept open for the life of
 * the JVM. Thread-safe.
 */
final class IncubatorLinking implements Linking {
  /** The module that must be in the boot layer. */
  static final String MODULE = "jdk.incubator.foreign";

  /** The JVM options that make these downcalls possible on Java 17. */
  static final String OPTIONS = "--add-modules " + MODULE + " --enable-native-access=ALL-UNNAMED";

  private final Object linker;
  private final Object cLong;
  private final Object cInt;
  private final String trivial;
  private final Class<?> layoutClass;
  private final Method ofLong;
  private final Method descriptorOf;
  private final Method descriptorOfVoid;
  private final Method withAttribute;
  private final Method downcallHandle;
  private final Map<String, Library> libraries = new ConcurrentHashMap<>();

  /**
   * @throws IllegalCallerException when native access is not enabled for this module (Java 17's
   *     message names the module)
   */
  IncubatorLinking() throws ReflectiveOperationException {
    Class<?> linkerClass = Class.forName("jdk.incubator.foreign.CLinker");
    Class<?> descriptorClass = Class.forName("jdk.incubator.foreign.FunctionDescriptor");
    Class<?> addressClass = Class.forName("jdk.incubator.foreign.MemoryAddress");
    Class<?> addressable = Class.forName("jdk.incubator.foreign.Addressable");
    layoutClass = Class.forName("jdk.incubator.foreign.MemoryLayout");
    cLong = linkerClass.getField("C_LONG_LONG").get(null);
    cInt = linkerClass.getField("C_INT").get(null);
    trivial = (String) descriptorClass.getField("TRIVIAL_ATTRIBUTE_NAME").get(null);
    ofLong = addressClass.getMethod("ofLong", long.class);
    descriptorOf =
        descriptorClass.getMethod("of", layoutClass, Array.newInstance(layoutClass, 0).getClass());
    descriptorOfVoid =
        descriptorClass.getMethod("ofVoid", Array.newInstance(layoutClass, 0).getClass());
    withAttribute = descriptorClass.getMethod("withAttribute", String.class, Constable.class);
    downcallHandle =
        linkerClass.getMethod("downcallHandle", addressable, MethodType.class, descriptorClass);
    // restricted: throws IllegalCallerException without --enable-native-access for this module
    linker = linkerClass.getMethod("getInstance").invoke(null);
  }

  @Override
  public String kind() {
    return "FFM downcalls (Java 17 incubator)";
  }

  @Override
  public Object library(String name) {
    Library library = libraries.get(name);
    if (library == null) {
      library = Library.getCachedInstance(name, Library.LAZY | Library.LOCAL);
      if (library == null) {
        throw new IllegalArgumentException("Cannot open library: " + Library.getLastError());
      }
      Library raced = libraries.putIfAbsent(name, library);
      library = raced == null ? library : raced;
    }
    return library;
  }

  @Override
  public long symbol(Object library, String symbol) {
    return ((Library) library).getSymbolAddress(symbol);
  }

  @Override
  public MethodHandle downcall(long functionAddress, Class<?> result, Class<?>... arguments)
      throws ReflectiveOperationException {
    Object layouts = Array.newInstance(layoutClass, arguments.length);
    for (int i = 0; i < arguments.length; i++) {
      Array.set(layouts, i, layout(arguments[i]));
    }
    Object descriptor =
        result == void.class
            ? descriptorOfVoid.invoke(null, layouts)
            : descriptorOf.invoke(null, layout(result), layouts);
    descriptor = withAttribute.invoke(descriptor, trivial, Boolean.TRUE);
    MethodType type = MethodType.methodType(result, arguments);
    Object target = ofLong.invoke(null, functionAddress);
    MethodHandle handle = (MethodHandle) downcallHandle.invoke(linker, target, type, descriptor);
    return ForeignLinking.checked(handle, type);
  }

  private Object layout(Class<?> type) {
    if (type == long.class) {
      return cLong; // 64 bits: pointers, size_t and handles (LP64)
    }
    if (type == int.class) {
      return cInt;
    }
    throw ForeignLinking.notIntOrLong(type);
  }
}
