%% @doc The `http' request kind: HTTP/1.1 with keep-alive over the user's one connection. The
%% request bytes are built once, at validation; the reply is parsed with `erlang:decode_packet/3'
%% (the emulator's own HTTP parser). Bodies have a Content-Length or are chunked. With
%% `respond => true' the status, headers and body are returned to the user (for variables taken
%% from responses, checks and cookies), with `respond => body' the status and body only (what
%% the user takes needs no header: none is kept); otherwise they are read and dropped.
-module(beamscale_load_http).
-behaviour(beamscale_load_request).

-export([check/2, connect/1, request/3, close/1, head_body/1, method/1]).
-export([name/0, features/0, tsung/0, from_tsung/3, variant/1, request_name/2]).

-import(beamscale_load_http_chunked, [chunk/3, recv/4]).

%% The most bytes of a response's status line and headers (nginx's large_client_header_buffers
%% allow 32 KiB per line).
-define(MAX_HEAD, 64 * 1024).
-define(READER(R), {beamscale_load_reader, R}).
-define(VERSION, "0.1.0").
%% The longest method name taken: IANA's longest registered one has 17 characters.
-define(MAX_METHOD, 24).

%% @doc `#{method => get, path => "/", headers => [{Name, Value}], body => Bytes,
%% status => 200, respond => false, version => "1.1"}' (all optional) against host:port;
%% `version => "1.0"' sends HTTP/1.0, after which nginx and most servers close the connection
%% (reopened for the next request), as Tsung's `version="1.0"'.
-spec check(map(), beamscale_load_scenario:target()) -> {ok, map()} | {error, atom(), string()}.
check(Spec, #{host := Host, port := Port}) ->
    S = maps:merge(#{method => get, path => "/", headers => [], body => <<>>, status => 200,
                     respond => false, version => "1.1"}, Spec),
    #{method := M, path := P, headers := H, body := B, status := St, respond := R,
      version := V} = S,
    %% A dynamic request is checked again each time it is filled: no list walk per key.
    Bad = maps:keys(maps:without([method, path, headers, body, status, respond, version], S)),
    if Bad =/= [] -> {error, hd(Bad), "unknown key (known: method, path, headers, body, status, "
                                      "respond, version)"};
       V =/= "1.1", V =/= "1.0" -> {error, version, "expected \"1.1\", \"1.0\" or 2"};
       not (is_atom(M) orelse is_list(M)) ->
           {error, method, "expected an atom such as get or post, or a name such as \"PROPFIND\""};
       not is_list(P) -> {error, path, "expected a string starting with /"};
       not is_list(H) -> {error, headers, "expected a list of {Name, Value} strings"};
       not (is_binary(B) orelse is_list(B)) -> {error, body, "expected iodata"};
       not (is_integer(St) orelse is_list(St) andalso St =/= []) ->
           {error, status, "expected the expected status code or a list of them"};
       not is_boolean(R), R =/= body -> {error, respond, "expected true, false or body"};
       true -> checked(S, Host, Port)
    end;
check(_Spec, _Target) -> {error, target, "http needs a host:port target"}.

%% CR or LF in a request line or header would end it there: what follows would be a header, or a
%% second (smuggled) request, of the scenario's or of a hostile server's choosing (a variable).
checked(#{method := M, path := P, headers := H, body := B, status := St, respond := R,
          version := V}, Host, Port) ->
    Want = if is_integer(St) -> [St];
              true -> St
           end,
    Method = method(M),
    case crlf([{path, P} | [{headers, [N, V1]} || {N, V1} <- H]]) of
        {bad, Key} -> {error, Key, "CR or LF would split the request line or header (injection)"};
        ok when not is_binary(Method) ->
            {error, method, "a method name is up to 24 letters, digits and !#$%&'*+-.^_`|~ "
                            "(an HTTP token)"};
        ok when is_list(Want) ->
            case lists:all(fun is_integer/1, Want) of
                true -> {ok, #{bytes => bytes(Method, {P, V}, H, B, Host, Port), status => Want,
                               head => Method =:= <<"HEAD">>, respond => R}};
                false -> {error, status, "expected status codes (integers)"}
            end
    end.

crlf([]) -> ok;
crlf([{Key, Text} | More]) ->
    case binary:match(iolist_to_binary(Text), [<<"\r">>, <<"\n">>]) of
        nomatch -> crlf(More);
        _ -> {bad, Key}
    end.

bytes(Method, {Path, Version}, Headers, Body, Host, Port) ->
    Len = iolist_size(Body),
    iolist_to_binary(
      %% A space in the path would end the request line: sent as %20, as Tsung's escape_url.
      [Method, " ", beamscale_load_vars:url_escape(Path), " HTTP/", Version, "\r\n",
       "Host: ", host(Host), ":", integer_to_list(Port), "\r\n",
       [["User-Agent: ", user_agent(), "\r\n"] || not has_user_agent(Headers)],
       [[N, ": ", V, "\r\n"] || {N, V} <- Headers],
       case Len of 0 -> []; _ -> ["Content-Length: ", integer_to_list(Len), "\r\n"] end,
       "\r\n", Body]).

%% An IPv6 address in a Host header is bracketed (RFC 9110), as Tsung's encode_ipv6_address.
host(Host) ->
    case lists:member($:, Host) of
        true -> ["[", Host, "]"];
        false -> Host
    end.

%% Every request names its sender, as Tsung's do, unless the scenario gives its own.
has_user_agent(Headers) ->
    lists:any(fun({N, _}) -> is(<<"user-agent">>, iolist_to_binary(N)) end, Headers).

%% `beamscale/VERSION': the load app's version (a test checks it against the .app file, which
%% load nodes do not have: their code is loaded as binaries).
user_agent() -> <<"beamscale/", ?VERSION>>.

%% @doc A checked request's bytes split before the blank line that ends its head: headers a
%% dynamic request adds per request (cookies, credentials) go between the two.
-spec head_body(map()) -> {binary(), binary()}.
head_body(#{bytes := Bytes}) ->
    {At, 4} = binary:match(Bytes, <<"\r\n\r\n">>),
    {binary:part(Bytes, 0, At + 2), binary:part(Bytes, At + 4, byte_size(Bytes) - At - 4)}.

%% @doc A method's name on the wire, `bad' when it is no HTTP token (the http2 kind checks its
%% with it too). The common methods without a Unicode-aware case change; any other is an HTTP
%% token (RFC 9110: no space, CR or LF), sent as given (WebDAV's PROPFIND, MKCOL...).
-spec method(atom() | string()) -> binary() | bad.
method(get) -> <<"GET">>;
method(post) -> <<"POST">>;
method(M) when is_atom(M) -> method(string:uppercase(atom_to_list(M)));
method(M) ->
    case M =/= [] andalso length(M) =< ?MAX_METHOD andalso lists:all(fun tchar/1, M) of
        true -> list_to_binary(M);
        false -> bad
    end.

tchar(C) when C >= $a, C =< $z; C >= $A, C =< $Z; C >= $0, C =< $9 -> true;
tchar(C) -> lists:member(C, "!#$%&'*+-.^_`|~").

%% @doc A request's name without a label: its method and path as written, of the request line
%% (`static') or of a dynamic request's template (`dynamic': `GET /item/%%_id%%', not each
%% URL sent).
-spec request_name(static | dynamic, map()) -> unicode:chardata() | default.
request_name(static, #{bytes := Bytes}) ->
    [Line | _] = binary:split(iolist_to_binary(Bytes), <<"\r\n">>),
    case binary:split(Line, <<" ">>, [global]) of
        [Method, Path | _] -> [Method, " ", Path];
        _ -> default
    end;
request_name(static, _) -> default;
request_name(dynamic, Raw) ->
    Method = case maps:get(method, Raw, get) of
                 M when is_atom(M) -> string:uppercase(atom_to_binary(M));
                 M -> M
             end,
    [chars(Method), " ", chars(maps:get(path, Raw, "/"))].

%% Text as it is, any other term as Erlang writes it.
chars(T) ->
    case unicode:characters_to_binary(T) of
        B when is_binary(B) -> B;
        _ -> io_lib:format("~0tp", [T])
    end.

%% @doc Open the user's connection.
-spec connect(map()) -> {ok, beamscale_load_tcp:conn()} | {error, term()}.
connect(Target) -> beamscale_load_tcp:connect(Target).

%% @doc Send one request and read its response; a status other than the expected one is an error.
-spec request(map(), beamscale_load_tcp:conn(), pos_integer()) ->
    beamscale_load_request:result().
request(#{bytes := Bytes} = Spec, {S, Buf}, Timeout) ->
    case beamscale_load_reader:idle(S, Buf) of
        ok -> send(Spec, S, Bytes, Timeout);
        {error, Reason} -> gone(S, Reason)
    end.

send(Spec, S, Bytes, Timeout) ->
    case beamscale_load_tcp:send(S, Bytes) of
        ok ->
            case response(S, <<>>, beamscale_load_tcp:deadline(Timeout), Spec) of
                {ok, #{status := Got, conn := Keep, rest := Rest} = Acc} ->
                    ok = beamscale_load_request:status(Got),
                    Conn = case Keep of
                               keep -> {S, Rest};
                               close -> ok = beamscale_load_tcp:drop(S), closed
                           end,
                    result(Spec, Got, Conn, Acc);
                {error, Reason} -> gone(S, Reason)
            end;
        {error, Reason} -> gone(S, Reason)
    end.

result(#{status := Want, respond := false}, Got, Conn, _) ->
    case lists:member(Got, Want) of
        true -> {ok, Conn};
        false -> {error, {status, Got}, Conn}
    end;
result(#{status := Want, respond := R}, Got, Conn, #{headers := Hs, chunks := Chunks}) ->
    %% One chunk (a Content-Length body) is kept as the part of the received bytes it is.
    Body = if is_binary(Chunks) -> Chunks;
              true -> iolist_to_binary(Chunks)
           end,
    Resp = case R of
               body -> #{status => Got, body => Body};
               true -> #{status => Got, headers => lists:reverse(Hs), body => Body}
           end,
    case lists:member(Got, Want) of
        true -> {ok, Conn, Resp};
        false -> {error, {status, Got}, Conn, Resp}
    end.

gone(S, Reason) ->
    ok = beamscale_load_tcp:drop(S),
    {error, Reason, closed}.

%% The status line and headers: at most ?MAX_HEAD bytes in all (an endless header line is cut
%% there, not buffered until the deadline); reasons named, never the bytes received.
response(S, Buf, Deadline, Spec) ->
    case erlang:decode_packet(http_bin, Buf, []) of
        {ok, {http_response, _Version, Status, _}, Rest} ->
            headers(S, Rest, Deadline, Spec,
                    #{status => Status, length => 0, conn => keep, headers => [], chunks => [],
                      chunked => false, head => ?MAX_HEAD - (byte_size(Buf) - byte_size(Rest)),
                      max => beamscale_load_reader:max(S)});
        {more, _} when byte_size(Buf) > ?MAX_HEAD -> {error, ?READER({head_too_big, ?MAX_HEAD})};
        {more, _} ->
            %% Bytes that cannot begin "HTTP/" fail now, not at the deadline or the bound.
            case binary:longest_common_prefix([Buf, <<"HTTP/">>]) of
                N when N < byte_size(Buf), N < 5 -> {error, ?READER({bad_response, "HTTP"})};
                _ -> recv(S, Buf, Deadline, fun(B) -> response(S, B, Deadline, Spec) end)
            end;
        _ -> {error, ?READER({bad_response, "HTTP"})}
    end.

headers(_S, _Buf, _Deadline, _Spec, #{head := Left}) when Left < 0 ->
    {error, ?READER({head_too_big, ?MAX_HEAD})};
headers(S, Buf, Deadline, Spec, #{head := Left} = Acc) ->
    case erlang:decode_packet(httph_bin, Buf, []) of
        {ok, http_eoh, Rest} -> body(S, Rest, Deadline, Spec, Acc);
        {ok, {http_header, _, Name, _, V} = H, Rest} ->
            Acc1 = Acc#{head := Left - (byte_size(Buf) - byte_size(Rest))},
            headers(S, Rest, Deadline, Spec, header(Name, V, keep(H, Spec, Acc1)));
        {more, _} when byte_size(Buf) > Left -> {error, ?READER({head_too_big, ?MAX_HEAD})};
        {more, _} -> recv(S, Buf, Deadline, fun(B) -> headers(S, B, Deadline, Spec, Acc) end);
        _ -> {error, ?READER(bad_header)}
    end.

header('Content-Length', V, #{max := Max} = Acc) ->
    try binary_to_integer(ows_end(V)) of
        Len when Len > Max -> Acc#{length := {too_big, Max}};
        Len when Len >= 0 -> Acc#{length := Len};
        _ -> Acc#{length := {bad, V}}
    catch error:badarg -> Acc#{length := {bad, V}}
    end;
header('Connection', V, Acc) ->
    Acc#{conn := case is(<<"close">>, V) of true -> close; false -> keep end};
header('Transfer-Encoding', V, Acc) -> Acc#{chunked := is(<<"chunked">>, V)};
header(_, _, Acc) -> Acc.

%% Whether a header value is `Lower' in any case. ASCII matching on the binary: the string
%% module's Unicode-aware trim and lowercase were the costliest steps of reading a reply
%% (eprof; docs/load-measurements.md, "Client CPU").
is(Lower, V) ->
    W = ows_end(V),
    byte_size(W) =:= byte_size(Lower) andalso << <<(lower(C))>> || <<C>> <= W >> =:= Lower.

lower(C) when C >= $A, C =< $Z -> C + 32;
lower(C) -> C.

%% A value without its trailing blanks (RFC 9110 OWS; `decode_packet' drops the leading ones).
ows_end(<<>>) -> <<>>;
ows_end(V) ->
    case binary:last(V) of
        C when C =:= $\s; C =:= $\t -> ows_end(binary:part(V, 0, byte_size(V) - 1));
        _ -> V
    end.

%% Headers are kept only for a request whose headers the user needs, named as received.
keep({http_header, _, _, Name, V}, #{respond := true}, #{headers := Hs} = Acc) ->
    Acc#{headers := [{Name, ows_end(V)} | Hs]};
keep(_, _, Acc) -> Acc.

body(_S, Buf, _Deadline, #{head := true}, Acc) -> {ok, Acc#{rest => Buf}};
body(S, Buf, Deadline, Spec, #{chunked := true} = Acc) ->
    beamscale_load_http_chunked:body(S, Buf, Deadline, Spec, Acc);
body(_S, _Buf, _Deadline, _Spec, #{length := {too_big, Max}}) -> {error, ?READER({too_big, Max})};
body(_S, _Buf, _Deadline, _Spec, #{length := {bad, _}}) -> {error, ?READER(bad_length)};
body(_S, Buf, _Deadline, Spec, #{length := Len} = Acc) when byte_size(Buf) >= Len ->
    <<Body:Len/binary, Rest/binary>> = Buf,
    {ok, (chunk(Body, Spec, Acc))#{rest => Rest}};
%% A body nobody needs is dropped as it comes: the user holds one read of it at a time.
body(S, Buf, Deadline, #{respond := false} = Spec, #{length := Len} = Acc) ->
    Acc1 = Acc#{length := Len - byte_size(Buf)},
    recv(S, <<>>, Deadline, fun(B) -> body(S, B, Deadline, Spec, Acc1) end);
body(S, Buf, Deadline, Spec, Acc) ->
    recv(S, Buf, Deadline, fun(B) -> body(S, B, Deadline, Spec, Acc) end).

%% @doc Close the user's connection.
-spec close(beamscale_load_tcp:conn()) -> ok.
close(Conn) -> beamscale_load_tcp:close(Conn).

%% @doc The kind's step name.
-spec name() -> http.
name() -> http.

%% @doc `version => 2' (or `"2"'): the request in HTTP/2, an `http2' step (its keys, such as
%% `streams', are that kind's); any other spec is this kind's.
-spec variant(map()) -> same | {atom(), map()}.
variant(#{version := V} = Spec) when V =:= 2; V =:= "2" -> {http2, maps:remove(version, Spec)};
variant(_Spec) -> same.

%% @doc Everything dynamic: variables, checks, cookies, authentication, a compiled head.
-spec features() -> [beamscale_load_request:feature()].
features() -> [extract, match, cookies, auth, subst, headers, head].

%% @doc Tsung's `ts_http' sessions and their `<http>' element (`beamscale_load_http_tsung').
-spec tsung() -> beamscale_load_request:tsung().
tsung() -> beamscale_load_http_tsung:tsung().

%% @doc An `<http>' element with its children (`beamscale_load_http_tsung', given this kind's
%% check of a method name: no call back, no cycle).
-spec from_tsung(tuple(), tuple(), map()) -> {map(), [{atom(), map()}]}.
from_tsung(Req, E, Ctx) -> beamscale_load_http_tsung:from_tsung(Req, E, Ctx, fun method/1).
