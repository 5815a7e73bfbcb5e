%% @doc The one bounded reader of every stream kind's socket (http, tcp, raw, websocket, mysql,
%% pgsql, over TCP or TLS): what a misbehaving server sends cannot outlast a request's deadline
%% or outgrow its bound.
%%
%% - Sockets are `{active, ?ACTIVE}' (never `{active, true}'): at most ?ACTIVE messages of at
%%   most the socket's `buffer' each (1460 bytes by default) wait in the user's mailbox; past them
%%   the socket turns passive, what comes stays in the kernel's receive buffer, and TCP's flow
%%   control stops the server there. The socket is armed again only by a read that wants more.
%%   Messages, not a passive `recv' per read: that cost 60 % more reductions per HTTP request.
%% - The deadline is absolute, from the request's start (`start/1'): a server that sends a byte
%%   at a time, or an endless stream, is cut at the deadline as one that sends nothing.
%% - A request reads at most `max_reply_bytes' (the target's, default ?DEFAULT_MAX): past it the
%%   reply is the error `{beamscale_load_reader, {too_big, Max}}' and the kind drops the
%%   connection. The bound holds for bytes read and dropped as for bytes kept.
%% - Bytes found on an HTTP connection before a request is sent (`idle/2') are counted and the
%%   connection dropped: a reply nobody asked for.
-module(beamscale_load_reader).

-export([opened/2, closed/1, start/1, recv/3, recv_at_least/4, max/1, idle/2, default_max/0,
         active/0, arm/1, format_error/1]).

-define(DEFAULT_MAX, 16 * 1024 * 1024).
%% Messages a socket may deliver before it must be armed again (93 KB at most of 1460 bytes).
%% Not 8: the emulator moves a socket to the schedulers' own poll set, which needs no re-arming
%% per event, only after about 14 events without a deselect; at 8 each event re-armed its poll
%% (an epoll_ctl per MQTT PUBACK): 64 cut the CPU per QoS 1 publish by a fifth
%% (bench/mqtt_vs_tsung.sh).
-define(ACTIVE, 64).
%% Bytes read by this user's current request (a user runs one request at a time).
-define(READ, '$beamscale_load_reader_read').

%% @doc The default `max_reply_bytes': 16 MiB.
-spec default_max() -> pos_integer().
default_max() -> ?DEFAULT_MAX.

%% @doc The socket option the stream kinds open their sockets with.
-spec active() -> {active, pos_integer()}.
active() -> {active, ?ACTIVE}.

%% @doc Remember the bound of the socket `S' opened to `Target'.
-spec opened(beamscale_load_tcp:socket() | gen_udp:socket(), map()) -> ok.
opened(S, #{max_reply_bytes := Max}) -> put({?MODULE, S}, Max), ok;
opened(_S, _Target) -> ok.

%% @doc Forget a closed socket's bound, and drop what it delivered but nobody read.
-spec closed(beamscale_load_tcp:socket() | gen_udp:socket()) -> ok.
closed(S) ->
    erase({?MODULE, S}),
    ok = beamscale_load_transport:forget(S),
    flush(S).

flush(S) ->
    receive
        {Tag, S, _} when Tag =:= tcp; Tag =:= ssl; Tag =:= tcp_error; Tag =:= ssl_error -> flush(S);
        {Tag, S} when Tag =:= tcp_closed; Tag =:= ssl_closed; Tag =:= tcp_passive;
                      Tag =:= ssl_passive -> flush(S)
    after 0 -> ok
    end.

%% @doc The most bytes a request may read from `S'.
-spec max(beamscale_load_tcp:socket() | gen_udp:socket()) -> pos_integer().
max(S) ->
    case get({?MODULE, S}) of
        undefined -> ?DEFAULT_MAX;
        Max -> Max
    end.

%% @doc A request of `Timeout' ms starts: its deadline (monotonic ms), and nothing read yet.
-spec start(pos_integer()) -> integer().
start(Timeout) ->
    put(?READ, 0),
    erlang:monotonic_time(millisecond) + Timeout.

%% @doc `Buf' and what `S' has next, read before `Deadline'; counted for `bytes_received'. The
%% deadline is checked before each message: a server that never stops sending cannot keep the
%% `after' from firing.
-spec recv(beamscale_load_tcp:socket(), binary(), integer()) -> {ok, binary()} | {error, term()}.
recv(S, Buf, Deadline) ->
    case recv_data(S, Deadline) of
        {ok, Data} -> {ok, append(Buf, Data)};
        {error, _} = Error -> Error
    end.

%% @doc As `recv/3' until `Buf' and what came hold `Need' bytes at least (a message whose length
%% its header told): the pieces are joined once, at the end. Appending each piece to a buffer
%% the decoder had matched copied the whole buffer per piece (the match makes it read-only):
%% an 8 MB PostgreSQL row took 16 s, 5 700 copies of up to 8 MB.
-spec recv_at_least(beamscale_load_tcp:socket(), binary(), non_neg_integer(), integer()) ->
    {ok, binary()} | {error, term()}.
recv_at_least(_S, Buf, Need, _Deadline) when byte_size(Buf) >= Need -> {ok, Buf};
recv_at_least(S, Buf, Need, Deadline) -> gather(S, [Buf], byte_size(Buf), Need, Deadline).

gather(S, Acc, Size, Need, Deadline) ->
    case recv_data(S, Deadline) of
        {ok, Data} when Size + byte_size(Data) >= Need ->
            {ok, iolist_to_binary(lists:reverse(Acc, [Data]))};
        {ok, Data} -> gather(S, [Data | Acc], Size + byte_size(Data), Need, Deadline);
        {error, _} = Error -> Error
    end.

recv_data(S, Deadline) ->
    Read = case get(?READ) of
               undefined -> 0;
               R -> R
           end,
    Max = max(S),
    case Deadline - erlang:monotonic_time(millisecond) of
        Left when Left =< 0 -> {error, timeout};
        _ when Read >= Max -> {error, {?MODULE, {too_big, Max}}};
        Left ->
            receive
                {Tag, S, Data} when Tag =:= tcp; Tag =:= ssl ->
                    N = byte_size(Data),
                    put(?READ, Read + N),
                    beamscale_load_request:count(bytes_received, N),
                    beamscale_load_dump:capture(received, Data),
                    {ok, Data};
                {Tag, S} when Tag =:= tcp_passive; Tag =:= ssl_passive ->
                    ok = arm(S),
                    recv_data(S, Deadline);
                {Tag, S} when Tag =:= tcp_closed; Tag =:= ssl_closed -> {error, closed};
                {Tag, S, Reason} when Tag =:= tcp_error; Tag =:= ssl_error -> {error, Reason}
            after Left -> {error, timeout}
            end
    end.

%% @doc A socket of `{active, N}' that delivered its N messages armed again (a closed socket's
%% error is found by the next read).
-spec arm(beamscale_load_tcp:socket()) -> ok.
arm(S) -> _ = (beamscale_load_transport:which(S)):setopts(S, [active()]), ok.

append(<<>>, Data) -> Data;
append(Buf, Data) -> <<Buf/binary, Data/binary>>.

%% @doc Before a request on a kept connection: `ok' if neither `Buf' nor the mailbox holds bytes
%% of `S' (a closed socket is found by the request itself), else the error (bytes counted).
-spec idle(beamscale_load_tcp:socket(), binary()) -> ok | {error, {?MODULE, unsolicited}}.
idle(S, <<>>) ->
    receive
        {Tag, S, Data} when Tag =:= tcp; Tag =:= ssl ->
            beamscale_load_request:count(bytes_received, byte_size(Data)),
            beamscale_load_dump:capture(received, Data),
            {error, {?MODULE, unsolicited}}
    after 0 -> ok
    end;
idle(_S, Buf) ->
    beamscale_load_request:count(bytes_received, byte_size(Buf)),
    beamscale_load_dump:capture(received, Buf),
    {error, {?MODULE, unsolicited}}.

%% @doc The text of a reader's or a reply's error: short and fixed, never the bytes received
%% (a server answering garbage would make each reply a reason of its own).
-spec format_error({?MODULE, term()} | term()) -> iodata().
format_error({?MODULE, R}) -> format_error(R);
format_error({too_big, Max}) ->
    io_lib:format("reply above max_reply_bytes (~b): connection closed", [Max]);
format_error({head_too_big, Max}) -> io_lib:format("response head above ~b bytes", [Max]);
format_error(unsolicited) -> "bytes nobody asked for between requests: connection closed";
format_error({bad_response, Proto}) -> ["bad response (not ", Proto, ")"];
format_error(bad_header) -> "bad response (bad HTTP header)";
format_error(bad_length) -> "bad response (bad Content-Length)";
format_error(bad_chunk) -> "bad response (bad chunk)";
format_error(Other) -> io_lib:format("read error: ~0tp", [Other]).
