/* keeps the support library non-empty */
typedef int tb_test_support_empty;
