// TlsAcceptor and TlsConnector: each a TlsContext made from its config.

#include <stdexcept>

#include "pollux/tls/tls_acceptor.hpp"
#include "pollux/tls/tls_connector.hpp"

namespace pollux::tls {

TlsAcceptor::TlsAcceptor(const TlsConfig& config) {
  if (!config.is_server()) throw std::invalid_argument("pollux::tls::TlsAcceptor: needs TlsConfig::server()");
  context_ = make_arc<detail::TlsContext>(config);
}

TlsConnector::TlsConnector(const TlsConfig& config) {
  if (config.is_server()) throw std::invalid_argument("pollux::tls::TlsConnector: needs TlsConfig::client()");
  context_ = make_arc<detail::TlsContext>(config);
}

}  // namespace pollux::tls
