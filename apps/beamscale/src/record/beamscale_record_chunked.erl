%% @doc A chunked request body (`Transfer-Encoding: chunked', RFC 9112 section 7.1) read off a
%% browser's connection for `beamscale_record_conn', bounded as its other bodies: at most `max'
%% bytes of data, a chunk-size line (or a trailer line) of ?MAX_LINE bytes, ?MAX_TRAILERS
%% trailers, all of it before `deadline'. The data is passed on and recorded as one body.
-module(beamscale_record_chunked).

-export([read/3]).

-define(MAX_LINE, 4096).
-define(MAX_TRAILERS, 100).

%% What is read next: more of whatever the browser sent, within `Ms' milliseconds.
-type recv() :: fun((Ms :: non_neg_integer()) -> {ok, binary()} | {error, term()}).
%% Why a body is refused, in words for the browser's 400 (`{refused, Why}').
-type refused() :: {refused, iodata()}.

%% @doc The body's data, or why it was refused (or the socket's error).
-spec read(recv(), binary(), #{max := pos_integer(), deadline := integer()}) ->
    {ok, binary()} | {error, refused() | term()}.
read(Recv, Buf, Bounds) -> size_line(Buf, [], 0, Bounds#{recv => Recv}).

size_line(Buf, Acc, Got, #{max := Max} = B) ->
    case line(Buf) of
        {ok, Line, Rest} ->
            case chunk_size(Line) of
                {ok, 0} -> trailers(Rest, ?MAX_TRAILERS, iolist_to_binary(Acc), B);
                {ok, N} when Got + N > Max ->
                    refused(io_lib:format("chunked body over ~b bytes", [Max]));
                {ok, N} -> data(Rest, N, Acc, Got, B);
                error -> refused("bad chunk-size line")
            end;
        more -> more(Buf, B, fun(Buf1) -> size_line(Buf1, Acc, Got, B) end);
        {error, _} = Error -> Error
    end.

data(Buf, N, Acc, Got, B) when byte_size(Buf) >= N + 2 ->
    case Buf of
        <<Data:N/binary, "\r\n", Rest/binary>> -> size_line(Rest, [Acc, Data], Got + N, B);
        _ -> refused("chunk not ended by CR LF")
    end;
data(Buf, N, Acc, Got, B) -> more(Buf, B, fun(Buf1) -> data(Buf1, N, Acc, Got, B) end).

trailers(_Buf, 0, _Body, _B) -> refused(io_lib:format("over ~b trailers", [?MAX_TRAILERS]));
trailers(Buf, Left, Body, B) ->
    case line(Buf) of
        {ok, <<>>, _Rest} -> {ok, Body};
        {ok, _Trailer, Rest} -> trailers(Rest, Left - 1, Body, B);
        more -> more(Buf, B, fun(Buf1) -> trailers(Buf1, Left, Body, B) end);
        {error, _} = Error -> Error
    end.

line(Buf) ->
    case binary:match(Buf, <<"\r\n">>) of
        {At, 2} when At =< ?MAX_LINE ->
            <<Line:At/binary, "\r\n", Rest/binary>> = Buf,
            {ok, Line, Rest};
        nomatch when byte_size(Buf) =< ?MAX_LINE -> more;
        _ -> refused(io_lib:format("chunk-size or trailer line over ~b bytes", [?MAX_LINE]))
    end.

%% The size before any `;extension', in hexadecimal.
chunk_size(Line) ->
    [Hex | _] = binary:split(Line, <<";">>),
    try binary_to_integer(string:trim(Hex), 16) of
        N when N >= 0 -> {ok, N};
        _ -> error
    catch error:badarg -> error
    end.

more(Buf, #{recv := Recv, deadline := Deadline}, Then) ->
    case Deadline - erlang:monotonic_time(millisecond) of
        Wait when Wait > 0 ->
            case Recv(Wait) of
                {ok, More} -> Then(<<Buf/binary, More/binary>>);
                {error, timeout} -> late();
                {error, _} = Error -> Error
            end;
        _ -> late()
    end.

late() -> refused("chunked body not all sent within its deadline").

refused(Why) -> {error, {refused, Why}}.
