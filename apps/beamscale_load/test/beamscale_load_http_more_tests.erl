%% The http kind's request line and head (issue #38): the default User-Agent, methods beyond
%% the common ones as text (never atoms from input), expected statuses, URL target addresses.
-module(beamscale_load_http_more_tests).

-include_lib("eunit/include/eunit.hrl").

-define(T, #{host => "127.0.0.1", port => 80}).

bytes(Spec) ->
    {ok, #{bytes := B}} = beamscale_load_http:check(Spec, ?T),
    B.

user_agent_test() ->
    _ = application:load(beamscale_load),
    {ok, Vsn} = application:get_key(beamscale_load, vsn),
    ?assertNotEqual(nomatch, binary:match(bytes(#{}),
                                          iolist_to_binary(["\r\nUser-Agent: beamscale/", Vsn,
                                                            "\r\n"]))),
    %% The scenario's own, in any case, replaces it.
    B = bytes(#{headers => [{"user-AGENT", "mine"}]}),
    ?assertEqual(nomatch, binary:match(B, <<"beamscale/">>)),
    ?assertNotEqual(nomatch, binary:match(B, <<"user-AGENT: mine\r\n">>)).

methods_test() ->
    ?assertMatch(<<"PROPFIND / HTTP/1.1\r\n", _/binary>>, bytes(#{method => "PROPFIND"})),
    ?assertMatch(<<"PATCH / HTTP/1.1\r\n", _/binary>>, bytes(#{method => patch})),
    ?assertMatch(<<"OPTIONS / HTTP/1.1\r\n", _/binary>>, bytes(#{method => options})),
    [?assertMatch({error, method, _}, beamscale_load_http:check(#{method => M}, ?T))
     || M <- ["GET /x HTTP/1.1\r\nX: y", "GE T", "", "G\nET", "GÉT", 42,
                 lists:duplicate(25, $Z)]],
    {ok, #{head := true}} = beamscale_load_http:check(#{method => "HEAD"}, ?T).

statuses_test() ->
    {ok, #{status := [200, 404]}} = beamscale_load_http:check(#{status => [200, 404]}, ?T),
    {ok, #{status := [201]}} = beamscale_load_http:check(#{status => 201}, ?T),
    ?assertMatch({error, status, _}, beamscale_load_http:check(#{status => []}, ?T)),
    ?assertMatch({error, status, _}, beamscale_load_http:check(#{status => [ok]}, ?T)).

check(Text) ->
    {ok, Entries} = beamscale_format_terms:parse(Text),
    beamscale_load_scenario:check("s", Entries).

url_address_test() ->
    Rest = "{phases, [{p, #{duration_s => 1, rate => 1}}]}.\n"
           "{sessions, [{s, #{steps => [{http, #{target => w}}]}}]}.\n",
    T = fun(A) ->
                {ok, #{targets := #{w := W}}} =
                    check("{targets, [{w, #{address => \"" ++ A ++ "\"}}]}.\n" ++ Rest),
                W
        end,
    ?assertMatch(#{host := "h", port := 8080}, T("http://h:8080")),
    ?assertMatch(#{host := "h", port := 8080}, T("http://h:8080/")),
    ?assertMatch(#{host := "h", port := 80}, T("http://h")),
    ?assertMatch(#{host := "h", port := 443, tls := _}, T("https://h")),
    ?assertMatch({error, _}, check("{targets, [{w, #{address => \"http://h:8080/x\"}}]}.\n"
                                   ++ Rest)).

%% A weighted choice picks each value about as often as its weight says.
choice_test() ->
    Src = {choice, [{80, <<"a">>}, {20, <<"b">>}]},
    {Picks, _} = lists:mapfoldl(fun(_, R) ->
                                        {[V], R1} = beamscale_load_vars_source:source(Src, 1, x, R),
                                        {V, R1}
                                end, rand:seed_s(exsss, 7), lists:seq(1, 1000)),
    A = length([P || P <- Picks, P =:= <<"a">>]),
    ?assert(A > 740 andalso A < 860, A).
