// The compiled parts of Boost.Asio and Boost.Beast, built once here instead of in every
// file that includes them (BOOST_ASIO_SEPARATE_COMPILATION / BOOST_BEAST_SEPARATE_COMPILATION
// are set for the duet_net library in CMakeLists.txt). A layer of its own because both the
// server and the load generator (loadgen/) use Asio, and neither may depend on the other.
#include <boost/asio/impl/src.hpp>
#include <boost/beast/src.hpp>
