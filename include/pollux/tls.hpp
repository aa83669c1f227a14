// pollux/tls.hpp: TLS over OpenSSL 3 for any pollux byte stream:
// TlsConfig, TlsAcceptor, TlsConnector, TlsStream and tls_errc. Built when
// the `tls` meson option is on (the default where OpenSSL 3 is found); link
// the pollux-tls dependency (pkg-config pollux-tls), not only pollux.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include "pollux/tls/tls_acceptor.hpp"
#include "pollux/tls/tls_config.hpp"
#include "pollux/tls/tls_connector.hpp"
#include "pollux/tls/tls_error.hpp"
#include "pollux/tls/tls_split.hpp"
#include "pollux/tls/tls_stream.hpp"
