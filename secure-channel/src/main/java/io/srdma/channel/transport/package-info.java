/**
 * Control connections on event loops: TLS 1.3 through {@link javax.net.ssl.SSLEngine} over
 * non-blocking sockets, a selector thread serving many connections. Used by the host and by the
 * SDK; not API.
 */
package io.srdma.channel.transport;
