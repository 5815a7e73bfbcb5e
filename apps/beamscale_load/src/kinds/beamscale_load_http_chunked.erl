%% @doc A chunked HTTP/1.1 response body (RFC 9112, section 7.1) read off the user's socket for
%% `beamscale_load_http': chunk sizes in hexadecimal, extensions skipped, trailers read and
%% dropped; and the body and socket helpers `beamscale_load_http' shares with it.
-module(beamscale_load_http_chunked).

-export([body/5, chunk/3, recv/4]).

%% A chunk-size line longer than this is not HTTP: refused rather than buffered without end.
-define(MAX_LINE, 4096).
-define(READER(R), {beamscale_load_reader, R}).

%% @doc Read the chunks in `Buf' (and from the socket until `Deadline'); `{ok, Acc}' with the
%% bytes after the body in `rest'.
-spec body(gen_tcp:socket(), binary(), integer(), map(), map()) ->
    {ok, map()} | {error, term()}.
body(S, Buf, Deadline, Spec, #{max := Max} = Acc) ->
    case line(Buf) of
        {ok, Line, Rest} ->
            case chunk_size(Line) of
                {ok, 0} -> trailers(S, Rest, Deadline, Acc);
                %% A chunk the reply's bound cannot hold fails now, not when its bytes have come.
                {ok, N} when N > Max -> {error, ?READER({too_big, Max})};
                {ok, N} -> data(S, Rest, N, Deadline, Spec, Acc);
                error -> {error, ?READER(bad_chunk)}
            end;
        more -> more(S, Buf, Deadline, fun(B) -> body(S, B, Deadline, Spec, Acc) end);
        {error, _} = E -> E
    end.

data(S, Buf, N, Deadline, Spec, Acc) when byte_size(Buf) >= N + 2 ->
    case Buf of
        <<Data:N/binary, "\r\n", Rest/binary>> ->
            body(S, Rest, Deadline, Spec, chunk(Data, Spec, Acc));
        _ -> {error, ?READER(bad_chunk)}
    end;
%% Data nobody needs is dropped as it comes (its CR LF waits for the check above).
data(S, Buf, N, Deadline, #{respond := false} = Spec, Acc) when byte_size(Buf) < N ->
    more(S, <<>>, Deadline, fun(B) -> data(S, B, N - byte_size(Buf), Deadline, Spec, Acc) end);
data(S, Buf, N, Deadline, Spec, Acc) ->
    more(S, Buf, Deadline, fun(B) -> data(S, B, N, Deadline, Spec, Acc) end).

trailers(S, Buf, Deadline, Acc) ->
    case line(Buf) of
        {ok, <<>>, Rest} -> {ok, Acc#{rest => Rest}};
        {ok, _Trailer, Rest} -> trailers(S, Rest, Deadline, Acc);
        more -> more(S, Buf, Deadline, fun(B) -> trailers(S, B, Deadline, Acc) end);
        {error, _} = E -> E
    end.

line(Buf) ->
    case binary:match(Buf, <<"\r\n">>) of
        {At, 2} -> {ok, binary:part(Buf, 0, At), binary:part(Buf, At + 2, byte_size(Buf) - At - 2)};
        nomatch when byte_size(Buf) > ?MAX_LINE -> {error, ?READER(bad_chunk)};
        nomatch -> more
    end.

%% The size before any `;extension'.
chunk_size(Line) ->
    Hex = string:trim(hd(binary:split(Line, <<";">>))),
    try binary_to_integer(Hex, 16) of
        N when N >= 0 -> {ok, N};
        _ -> error
    catch error:badarg -> error
    end.

more(S, Buf, Deadline, Then) -> recv(S, Buf, Deadline, Then).

%% @doc Keep a piece of the body when the user needs the response.
-spec chunk(binary(), map(), map()) -> map().
chunk(_Bin, #{respond := false}, Acc) -> Acc;
chunk(Bin, _Spec, #{chunks := []} = Acc) -> Acc#{chunks := Bin};
chunk(Bin, _Spec, #{chunks := Cs} = Acc) -> Acc#{chunks := [Cs, Bin]}.

%% @doc Read more into `Buf' and go on with `Then', or the error.
-spec recv(gen_tcp:socket(), binary(), integer(), fun((binary()) -> Result)) ->
    Result | {error, term()}.
recv(S, Buf, Deadline, Then) ->
    case beamscale_load_tcp:recv_more(S, Buf, Deadline) of
        {ok, Buf1} -> Then(Buf1);
        {error, _} = Error -> Error
    end.
