/**
 * Parts shared by the in-JVM providers ({@code soft}, {@code loopback}): key tables and child
 * counts. Public only because Java has no friend packages; not API, may change without notice.
 * Application code uses {@link io.srdma.verbs}.
 */
package io.srdma.verbs.internal;
