// The templates whose lock-guarded fields live in headers, instantiated
// once so that the thread_safety test's analysis sees their code.
#include <pollux/pollux.hpp>

#include <memory>
#include <string>

template class pollux::broadcast::Sender<int>;
template class pollux::broadcast::Receiver<int>;
template class pollux::broadcast::Sender<std::string>;
template class pollux::broadcast::Receiver<std::string>;
template class pollux::watch::Sender<int>;
template class pollux::watch::Receiver<int>;
template class pollux::watch::Sender<std::string>;
template class pollux::watch::Receiver<std::string>;
template class pollux::StaticChannel<int, 4>;
template class pollux::StaticChannel<std::string, 2>;
