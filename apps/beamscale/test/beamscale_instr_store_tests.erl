-module(beamscale_instr_store_tests).
-include_lib("eunit/include/eunit.hrl").

-define(HEADER, "benchmark,phase,args,otp,erl_args,schedulers,nodes,launch,sample,instructions\n").

%% Written per key, launch and sample; read back per stats key, launches in launch order.
round_trip_test() ->
    Dir = tmp_dir(),
    Env = beamscale_format_env:key(#{otp => <<"25">>, erl_args => <<"default">>,
                                     schedulers => 1, nodes => 1}),
    ok = beamscale_instr_store:write(Dir, [{{<<"e">>, <<"-">>, Env}, <<"call">>,
                                            [[2970.5, 2971], [2969.25]]}]),
    ?assertEqual({ok, #{{<<"e">>, <<"call">>, <<"-">>, <<"25">>, <<"default">>, 1, 1} =>
                            [[2970.5, 2971.0], [2969.25]]}},
                 beamscale_instr_store:read(Dir)),
    ok = file:del_dir_r(Dir).

%% A hostile file: each fault named by file, line and column, in one line.
bad_files_test() ->
    Dir = tmp_dir(),
    ?assertMatch({error, {beamscale_instr_store, {missing, _}}}, beamscale_instr_store:read(Dir)),
    Cases = [{"a,b\n", "not the header"},
             {?HEADER "e,call,-,25,default,1,1,0,1,5.0\n", ":2: column launch is not a positive"},
             {?HEADER "e,call,-,25,default,1,1,1,1,5.0\ne,call,-,25,default,1,1,1,2,x\n",
              ":3: column instructions is not a number"},
             {?HEADER "e,call,-,25,default,1,1,1\n", ":2: expected 10 columns"}],
    [begin
         ok = file:write_file(beamscale_instr_store:file(Dir), Content),
         {error, {beamscale_instr_store, Why}} = beamscale_instr_store:read(Dir),
         Text = lists:flatten(io_lib:format("~ts", [beamscale_instr_store:format_error(Why)])),
         ?assertNotEqual(nomatch, string:find(Text, Expected), Text),
         ?assertEqual(nomatch, string:find(Text, "\n"))
     end || {Content, Expected} <- Cases],
    ok = file:del_dir_r(Dir).

tmp_dir() ->
    Dir = filename:join(["/tmp", "beamscale-instr-store-" ++ os:getpid() ++ "-"
                         ++ integer_to_list(erlang:unique_integer([positive]))]),
    ok = filelib:ensure_path(Dir),
    Dir.
