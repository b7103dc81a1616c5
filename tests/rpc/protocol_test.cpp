// The RPC wire format and the token handshake, on real loopback sockets.
#include <gtest/gtest.h>

#include <thread>

#include "optune/measure/rpc/auth.hpp"
#include "optune/measure/rpc/channel.hpp"
#include "optune/measure/rpc/frame.hpp"

namespace {

using namespace optune::measure::rpc;
using Seconds = Channel::Seconds;

std::array<char, kHeaderBytes> header_of(const std::string& head) {
  std::array<char, kHeaderBytes> bytes;
  std::copy_n(head.begin(), kHeaderBytes, bytes.begin());
  return bytes;
}

TEST(Frame, HeaderRoundTrips) {
  Frame frame{MessageType::kMeasure, {{"request", {{"workload", "gemm.f32.M8.N8.K8"}}}}, std::string(100, 'x')};
  std::string head = encode_frame_head(frame);
  FrameHeader header = decode_frame_header(header_of(head), 1000);
  EXPECT_EQ(header.type, MessageType::kMeasure);
  EXPECT_EQ(header.payload_bytes, 100u);
  EXPECT_EQ(decode_metadata(head.substr(kHeaderBytes, header.metadata_bytes)), frame.metadata);
}

TEST(Frame, RejectsBadMagicUnknownTypeAndOversizedParts) {
  std::string head = encode_frame_head({MessageType::kResult, {}, std::string(10, 'x')});
  auto bad_magic = header_of(head);
  bad_magic[0] = 'X';
  EXPECT_THROW(decode_frame_header(bad_magic, 100), FrameError);
  auto bad_type = header_of(head);
  bad_type[7] = 99;
  EXPECT_THROW(decode_frame_header(bad_type, 100), FrameError);
  EXPECT_THROW(decode_frame_header(header_of(head), 9), FrameError);  // payload over the limit
  auto huge_metadata = header_of(head);
  huge_metadata[8] = 0x7f;
  EXPECT_THROW(decode_frame_header(huge_metadata, 100), FrameError);
  EXPECT_THROW(decode_metadata("[1, 2]"), FrameError);
  EXPECT_THROW(decode_metadata("{\"a\": "), FrameError);
}

TEST(Frame, PeerOfAnotherVersionIsNamedWithBothVersions) {
  auto bytes = header_of(encode_frame_head({MessageType::kChallenge, {}, {}}));
  bytes[5] = 7;
  try {
    decode_frame_header(bytes, 0);
    FAIL() << "accepted version 7";
  } catch (const FrameError& error) {
    EXPECT_NE(std::string(error.what()).find("version 7"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("version " + std::to_string(kProtocolVersion)), std::string::npos);
  }
}

TEST(Auth, HmacSha256MatchesRfc4231) {
  EXPECT_EQ(hmac_sha256_hex(Token{"Jefe"}, "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(Endpoint, ParsesAndRejects) {
  EXPECT_EQ(parse_endpoint("10.0.0.2:9190").port, 9190);
  EXPECT_EQ(parse_endpoint("localhost:1").host, "localhost");
  EXPECT_THROW(parse_endpoint("localhost"), std::invalid_argument);
  EXPECT_THROW(parse_endpoint("host:99999"), std::invalid_argument);
  EXPECT_THROW(parse_endpoint("host:12x"), std::invalid_argument);
  EXPECT_TRUE(is_loopback_host("127.0.0.1"));
  EXPECT_TRUE(is_loopback_host("::1"));
  EXPECT_FALSE(is_loopback_host("0.0.0.0"));
  EXPECT_FALSE(is_loopback_host("10.1.2.3"));
}

// A listener on loopback that runs `serve` on its one accepted connection.
class OneConnectionListener {
 public:
  template <class Serve>
  explicit OneConnectionListener(Serve serve) : acceptor_(io_, {asio::ip::make_address("127.0.0.1"), 0}) {
    thread_ = std::thread([this, serve] {
      auto io = std::make_unique<asio::io_context>();
      auto socket = acceptor_.accept(*io);
      Channel channel(std::move(io), std::move(socket));
      serve(channel);
    });
  }
  ~OneConnectionListener() { thread_.join(); }
  Endpoint endpoint() const { return {"127.0.0.1", acceptor_.local_endpoint().port()}; }

 private:
  asio::io_context io_;
  asio::ip::tcp::acceptor acceptor_;
  std::thread thread_;
};

TEST(Handshake, RightTokenIsWelcomedWrongTokenRefused) {
  for (const std::string answer : {"s3cret", "wrong", ""}) {
    std::string outcome;
    {
      OneConnectionListener listener([&](Channel& channel) {
        try {
          accept_handshake(channel, Token{"s3cret"}, "server", {}, {{"hello", 1}});
          outcome = "welcomed";
        } catch (const TransportError& error) {  // AuthenticationError, or the client gave up
          outcome = error.what();
        }
      });
      Channel client = Channel::connect(listener.endpoint(), Seconds(5));
      if (answer == "s3cret") {
        EXPECT_EQ(connect_handshake(client, Token{answer}, {{"role", "client"}})["hello"], 1);
      } else {
        EXPECT_THROW(connect_handshake(client, Token{answer}, {{"role", "client"}}), AuthenticationError) << answer;
      }
    }
    if (answer == "s3cret") EXPECT_EQ(outcome, "welcomed");
    else if (answer == "wrong") EXPECT_NE(outcome.find("wrong token"), std::string::npos) << outcome;
    EXPECT_EQ(outcome.find("s3cret"), std::string::npos) << "the token leaked into a message: " << outcome;
  }
}

TEST(Handshake, ClientWithATokenRefusesAListenerThatCannotProveItHoldsIt) {
  OneConnectionListener impostor([](Channel& channel) {
    try {
      accept_handshake(channel, Token{}, "server", {}, {{"device", "fake"}});  // accepts anyone, proves nothing
      channel.receive(Seconds(5));
    } catch (const TransportError&) {
    }
  });
  Channel client = Channel::connect(impostor.endpoint(), Seconds(5));
  try {
    connect_handshake(client, Token{"s3cret"}, {{"role", "client"}});
    FAIL() << "trusted a server without the token";
  } catch (const AuthenticationError& error) {
    EXPECT_NE(std::string(error.what()).find("does not hold our token"), std::string::npos) << error.what();
  }
}

TEST(Channel, TruncatedFrameIsATransportErrorNotAHang) {
  OneConnectionListener listener([](Channel& channel) {
    std::string head = encode_frame_head({MessageType::kResult, {{"reply", 1}}, std::string(50, 'x')});
    asio::write(channel.socket(), asio::buffer(head + std::string(10, 'x')));  // 40 payload bytes short
    channel.close();
  });
  Channel client = Channel::connect(listener.endpoint(), Seconds(5));
  EXPECT_THROW(client.receive(Seconds(5)), TransportError);
}

TEST(Channel, SilentPeerTimesOut) {
  OneConnectionListener listener([](Channel& channel) { std::this_thread::sleep_for(std::chrono::milliseconds(600)); channel.close(); });
  Channel client = Channel::connect(listener.endpoint(), Seconds(5));
  auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(client.receive(Seconds(0.2)), TransportError);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
}

TEST(Channel, OversizedPayloadIsRefusedBeforeItsBytesAreRead) {
  std::string received_error;
  {
    OneConnectionListener listener([&](Channel& channel) {
      channel.set_max_payload_bytes(1000);
      try {
        channel.receive(Seconds(5));
      } catch (const TransportError& error) {
        received_error = error.what();
      }
    });
    Channel client = Channel::connect(listener.endpoint(), Seconds(5));
    // Only the header of a 1 GiB frame is sent: the receiver must not wait for the rest.
    std::string head = encode_frame_head({MessageType::kMeasure, {}, {}});
    head[12] = 0x40;
    asio::write(client.socket(), asio::buffer(head));
    Frame reply = client.receive(Seconds(5));
    EXPECT_EQ(reply.type, MessageType::kError);
    EXPECT_NE(reply.metadata.value("message", "").find("over the limit"), std::string::npos) << reply.metadata;
  }
  EXPECT_NE(received_error.find("over the limit"), std::string::npos) << received_error;
}

}  // namespace
