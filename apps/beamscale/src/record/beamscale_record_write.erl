%% @doc What `beamscale record' writes (docs/record.md), pure: the requests recorded, in order,
%% as a Tsung XML file and as a terms scenario with one session, one user, think times from the
%% gaps between requests, POST bodies and the headers that matter (content type, authorization).
-module(beamscale_record_write).

-export([tsung/1, terms/1]).
-export_type([request/0]).

-type request() :: #{method := atom(), scheme => http | https, host := string(),
                     port := inet:port_number(),
                     path := string(), headers := [{string(), string()}], body := binary(),
                     status := integer(), at := integer()}.

%% Gaps shorter than this are a browser fetching a page's parts at once, not a person thinking.
-define(MIN_THINK_MS, 100).
-define(KEPT, ["content-type", "authorization"]).

%% @doc The Tsung XML file.
-spec tsung([request()]) -> iodata().
tsung(Reqs) ->
    ["<?xml version=\"1.0\"?>\n<!-- Recorded by beamscale record: ", integer_to_list(length(Reqs)),
     " requests. Replay: ./beamscale load FILE.xml -->\n<tsung>\n"
     "  <load>\n    <arrivalphase phase=\"1\" duration=\"1\" unit=\"second\">\n"
     "      <users maxnumber=\"1\" arrivalrate=\"10\" unit=\"second\"/>\n"
     "    </arrivalphase>\n  </load>\n  <sessions>\n"
     "    <session name=\"recorded\" probability=\"100\" type=\"ts_http\">\n",
     [[[["      <thinktime value=\"", seconds(T), "\" random=\"false\"/>\n"] || T <- [Think],
        T > 0],
       "      <request><http url=\"", attr(url(R)), "\" method=\"",
       string:uppercase(atom_to_list(M)), "\" version=\"1.1\"",
       [[" contents=\"", attr(Body), "\""] || byte_size(Body) > 0],
       case kept(R) of
           [] -> "/></request>\n";
           Hs -> [">\n", [["        <http_header name=\"", attr(K), "\" value=\"", attr(V),
                           "\"/>\n"] || {K, V} <- Hs],
                  "      </http></request>\n"]
       end]
      || {Think, #{method := M, body := Body} = R} <- thinks(Reqs)],
     "    </session>\n  </sessions>\n</tsung>\n"].

%% @doc The terms scenario: a target per server, one user, the session's steps.
-spec terms([request()]) -> iodata().
terms(Reqs) ->
    Targets = targets(Reqs),
    Steps = lists:append(
              [[{think, T} || T > 0]
               ++ [{http, maps:merge(#{target => target(R, Targets), method => M, path => P,
                                       status => S},
                                     maps:from_list([{body, B} || byte_size(B) > 0]
                                                    ++ [{headers, Hs} || Hs <- [kept(R)],
                                                                         Hs =/= []]))}]
               || {T, #{method := M, path := P, status := S, body := B} = R} <- thinks(Reqs)]),
    ["%% Recorded by beamscale record: ", integer_to_list(length(Reqs)), " requests.\n"
     "%% Replay: ./beamscale load FILE.scenario\n",
     [["%% https targets: the server's certificate is not checked (as in Tsung's file); "
       "verify_peer with\n%% a cacertfile checks it.\n"] || lists:any(fun is_https/1, Reqs)],
     term({targets, [{N, target_opts(A)} || {A, N} <- Targets]}),
     term({phases, [{recorded, #{duration_s => 1, rate => 10, max_users => 1}}]}),
     term({sessions, [{recorded, #{steps => Steps}}]}),
     term({drain_s, max(10, (lists:sum([T || {think, T} <- Steps]) + 999) div 1000 + 10)})].

term(T) -> io_lib:format("~tp.~n", [T]).

%% Each request with the gap since the one before (0 for the first, and below ?MIN_THINK_MS).
thinks(Reqs) ->
    {L, _} = lists:mapfoldl(fun(#{at := At} = R, Prev) ->
                                    Gap = case Prev of none -> 0; _ -> At - Prev end,
                                    {{case Gap >= ?MIN_THINK_MS of true -> Gap; false -> 0 end,
                                      R}, At}
                            end, none, Reqs),
    L.

targets(Reqs) ->
    Addrs = lists:usort([address(R) || R <- Reqs]),
    [{A, list_to_atom("server" ++ integer_to_list(I))}
     || {I, A} <- lists:zip(lists:seq(1, length(Addrs)), Addrs)].

target(R, Targets) -> proplists:get_value(address(R), Targets).

%% "http://host:port" or "https://host:port": a server is its scheme, host and port.
address(#{host := H, port := P} = R) ->
    atom_to_list(maps:get(scheme, R, http)) ++ "://" ++ H ++ ":" ++ integer_to_list(P).

target_opts("https://" ++ _ = A) -> #{address => A, tls => #{verify => verify_none}};
target_opts(A) -> #{address => A}.

is_https(R) -> maps:get(scheme, R, http) =:= https.

url(#{path := P} = R) -> address(R) ++ P.

kept(#{headers := Hs}) -> [{K, V} || {K, V} <- Hs, lists:member(K, ?KEPT)].

seconds(Ms) -> float_to_list(Ms / 1000, [{decimals, 3}, compact]).

attr(Text) ->
    Chars = case unicode:characters_to_list(Text) of
                L when is_list(L) -> L;
                _ -> binary_to_list(iolist_to_binary(Text))
            end,
    lists:flatmap(fun($&) -> "&amp;"; ($<) -> "&lt;"; ($>) -> "&gt;"; ($") -> "&quot;";
                     ($\n) -> "&#10;"; ($\r) -> "&#13;"; (C) -> [C]
                  end, Chars).
